import Foundation

/// `PATCH /v1/device/factors/{id}` (device JWT): a new push token, name or metadata.
public struct UpdateFactorRequest: Codable, Sendable {
    public var pushToken: String?
    public var friendlyName: String?
    /// Replaces the app's metadata as a whole (`{}` removes it).
    public var metadata: [String: String]?

    public init(pushToken: String? = nil, friendlyName: String? = nil, metadata: [String: String]? = nil) {
        self.pushToken = pushToken
        self.friendlyName = friendlyName
        self.metadata = metadata
    }
}
