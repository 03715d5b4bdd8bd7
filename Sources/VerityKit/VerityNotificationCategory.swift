import Foundation
import VerityCore

/// The notification categories and actions of a Verity challenge, as the app registers them and the server names them.
///
/// The server sends every challenge notification with the category ``standard``. A notification service extension
/// that rewrites the notification (``VerityPush/notificationContent(for:)``) moves a challenge that requires user
/// verification to ``userVerification``, whose Approve action opens the app so the biometric prompt can show.
/// `VerityNotificationCategory.register(on:)` registers both on Apple platforms.
public enum VerityNotificationCategory {
    /// The category the server sends (`APNsPushSender.category`).
    public static let standard = "VERITY_CHALLENGE"
    /// The category of a challenge that requires user verification.
    public static let userVerification = "VERITY_CHALLENGE_UV"
    /// The Approve action.
    public static let approveAction = "VERITY_APPROVE"
    /// The Deny action.
    public static let denyAction = "VERITY_DENY"
    /// The "This wasn't me" action: a denial that reports unusual activity.
    public static let notMeAction = "VERITY_NOT_ME"

    /// One action of a category, with what the system must do before it runs.
    public struct Action: Sendable, Equatable {
        /// The action's identifier.
        public var identifier: String
        /// The button's title.
        public var title: String
        /// Whether the device must be unlocked first (`authenticationRequired`).
        public var requiresUnlock: Bool
        /// Whether the button is shown as destructive.
        public var isDestructive: Bool
        /// Whether the action opens the app (`foreground`), where the biometric prompt can show.
        public var opensApp: Bool
    }

    /// The actions of a category: Approve, Deny and This wasn't me.
    ///
    /// Approve always needs the device unlocked, so a locked phone in someone else's hand cannot approve; for
    /// ``userVerification`` it also opens the app, where the prompt for the user-verification key shows. Deny needs
    /// nothing; This wasn't me, which makes the server act against the account, needs the device unlocked.
    ///
    /// - Parameters:
    ///   - category: ``standard`` or ``userVerification``.
    ///   - titles: The button titles, by action identifier; English ones where absent.
    /// - Returns: The actions, in the order shown.
    public static func actions(for category: String, titles: [String: String] = [:]) -> [Action] {
        [
            Action(
                identifier: approveAction, title: titles[approveAction] ?? "Approve", requiresUnlock: true,
                isDestructive: false, opensApp: category == userVerification),
            Action(
                identifier: denyAction, title: titles[denyAction] ?? "Deny", requiresUnlock: false,
                isDestructive: true, opensApp: false),
            Action(
                identifier: notMeAction, title: titles[notMeAction] ?? "This wasn't me", requiresUnlock: true,
                isDestructive: true, opensApp: false),
        ]
    }

    /// The category a challenge's notification should have: ``userVerification`` when it requires the owner.
    ///
    /// - Parameter challenge: The challenge, as fetched and checked.
    /// - Returns: The category identifier.
    public static func category(for challenge: DeviceChallenge) -> String {
        challenge.userVerification == .required ? userVerification : standard
    }
}
