import Foundation
import VerityCore

/// What the user chose on a Verity notification, read from the response's action identifier and payload: a
/// `Sendable` value that any actor can hand to ``VerityPush/respond(to:)``.
public struct NotificationResponseDecision: Sendable, Equatable {
    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Approve (the Approve action).
        case approve
        /// Deny, with "this wasn't me" as the reason for that action.
        case deny(DenyReason?)
        /// Show the challenge in the app (the user tapped the notification itself).
        case open
    }

    /// The challenge the notification announced.
    public var notification: PushChallengeNotification
    /// What the user chose.
    public var action: Action

    /// Reads a response. Synchronous and free of any actor, so it runs where the response arrives.
    ///
    /// - Parameters:
    ///   - actionIdentifier: The response's action identifier; anything but Verity's actions means ``Action/open``.
    ///   - userInfo: The notification's payload.
    /// - Throws: As ``PushChallengeNotification/init(payload:)``: ``VerityKitError/mapping(_:)`` for a notification
    ///   that is not Verity's.
    public init(actionIdentifier: String, userInfo: [AnyHashable: Any]) throws {
        self.notification = try PushChallengeNotification(payload: userInfo)
        switch actionIdentifier {
        case VerityNotificationCategory.approveAction: self.action = .approve
        case VerityNotificationCategory.denyAction: self.action = .deny(nil)
        case VerityNotificationCategory.notMeAction: self.action = .deny(.notMe)
        default: self.action = .open
        }
    }
}
