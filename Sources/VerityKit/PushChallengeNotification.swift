import Foundation

/// A push notification announcing a Verity challenge, read from an APNs `userInfo` or an FCM data message.
///
/// The notification only names the challenge; fetch it with ``VerityPush/getChallenge(id:factorId:)`` to show what is
/// asked, and answer with ``VerityPush/approve(challengeId:factorId:)`` or ``VerityPush/deny(challengeId:factorId:)``.
public struct PushChallengeNotification: Sendable, Equatable {
    /// The `type` value that marks a Verity challenge notification.
    public static let messageType = "verity.challenge"

    /// The challenge to answer (`chl_…`).
    public var challengeId: String
    /// The factor the challenge was sent to (`fac_…`).
    public var factorId: String
    /// The notification's title, when it has one.
    public var title: String?
    /// The notification's text, when it has one.
    public var body: String?

    /// Creates a notification.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge identifier.
    ///   - factorId: The factor identifier.
    ///   - title: The title, or `nil`.
    ///   - body: The text, or `nil`.
    public init(challengeId: String, factorId: String, title: String? = nil, body: String? = nil) {
        self.challengeId = challengeId
        self.factorId = factorId
        self.title = title
        self.body = body
    }

    /// Reads a notification payload.
    ///
    /// Accepts an APNs `userInfo` (`{"aps": {"alert": …}, "type": "verity.challenge", "challengeId": …,
    /// "factorId": …}`) and an FCM data message (`{"type": "verity.challenge", "challengeId", "factorId", "title",
    /// "body"}`, all strings).
    ///
    /// - Parameter payload: The notification's payload.
    /// - Throws: ``VerityKitError/mapping(_:)`` when the payload is not a Verity challenge notification (so the app can
    ///   hand it to its other handlers); ``VerityKitError/input(_:)`` when it is one but its identifiers are missing or
    ///   malformed.
    public init(payload: [AnyHashable: Any]) throws {
        guard let type = payload["type"] as? String, type == Self.messageType else {
            throw VerityKitError.mapping("The notification is not a Verity challenge.")
        }
        guard let challengeId = payload["challengeId"] as? String,
            Identifier.isValid(challengeId, prefix: Identifier.challengePrefix)
        else {
            throw VerityKitError.input("The Verity notification has no valid challenge identifier.")
        }
        guard let factorId = payload["factorId"] as? String,
            Identifier.isValid(factorId, prefix: Identifier.factorPrefix)
        else {
            throw VerityKitError.input("The Verity notification has no valid factor identifier.")
        }
        var title = payload["title"] as? String
        var body = payload["body"] as? String
        if let aps = payload["aps"] as? [AnyHashable: Any] {
            if let alert = aps["alert"] as? [AnyHashable: Any] {
                title = title ?? alert["title"] as? String
                body = body ?? alert["body"] as? String
            } else if let alert = aps["alert"] as? String {
                body = body ?? alert
            }
        }
        self.init(challengeId: challengeId, factorId: factorId, title: title, body: body)
    }
}
