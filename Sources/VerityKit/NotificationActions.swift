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
