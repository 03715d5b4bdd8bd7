import Foundation

/// The context a device shows with a challenge: where and when the request was made, and from which app. It is part
/// of what the device signs (see ``ChallengeSigningPayload/displayedContentHash(message:details:context:)``), so nothing the
/// phone shows can be changed on the way without the answer being refused.
public struct ChallengeContext: Codable, Sendable, Equatable {
    /// Where the request comes from, as the backend describes it ("Berlin, Germany").
    public var location: String?
    /// The client that made the request ("Safari on macOS").
    public var client: String?
    /// The app or site the user is signing in to.
    public var app: String?
    /// When the request was made; the server sets it to the challenge's creation, to the second.
    public var time: Date?
    /// More lines of text the backend wants shown, in order.
    public var textItems: [String]?

    /// Creates a context.
    public init(
        location: String? = nil, client: String? = nil, app: String? = nil, time: Date? = nil,
        textItems: [String]? = nil
    ) {
        self.location = location
        self.client = client
        self.app = app
        self.time = time
        self.textItems = textItems
    }
}
