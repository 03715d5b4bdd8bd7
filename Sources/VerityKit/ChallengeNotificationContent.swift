import Foundation
import VerityCore

/// What a notification service extension shows for a challenge it fetched and checked.
public struct ChallengeNotificationContent: Sendable, Equatable {
    /// The title, or `nil` to keep the notification's.
    public var title: String?
    /// The text: the challenge's message, then each detail and the context on its own line.
    public var body: String
    /// The category, which decides the actions offered (see ``VerityNotificationCategory``).
    public var categoryIdentifier: String

    /// What to show when the challenge could not be fetched or did not check out: no category, so no Approve action
    /// on the notification.
    public static let unverified = ChallengeNotificationContent(
        title: nil, body: "Open the app to review this request.", categoryIdentifier: "")

    /// The content for a challenge.
    ///
    /// - Parameter challenge: The challenge, as ``VerityPush/getChallenge(id:factorId:)`` fetched and checked it.
    public init(challenge: DeviceChallenge) {
        var lines = [challenge.message]
        lines += challenge.details.map { "\($0.label): \($0.value)" }
        if let context = challenge.context {
            lines += [context.location, context.client, context.app].compactMap { $0 }
        }
        self.init(
            title: nil, body: lines.joined(separator: "\n"),
            categoryIdentifier: VerityNotificationCategory.category(for: challenge))
    }

    init(title: String?, body: String, categoryIdentifier: String) {
        self.title = title
        self.body = body
        self.categoryIdentifier = categoryIdentifier
    }
}
