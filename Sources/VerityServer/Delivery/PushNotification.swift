import Logging
import VerityCore

/// One push notification: an alert announcing a challenge to a device, or a silent one carrying data to the app
/// (app verification).
public struct PushNotification: Codable, Sendable, Equatable {
    /// The outbox message id (`msg_…`), stable across retries.
    public var id: String
    public var platform: PushPlatform
    /// The APNs device token (hex) or FCM registration token.
    public var token: String
    /// The app's bundle id (APNs topic) or package name, when the device reported one.
    public var appId: String?
    /// The APNs environment the device token belongs to, when the device reported one.
    public var apnsEnvironment: APNsEnvironment?
    public var title: String
    public var body: String
    public var challengeId: String
    public var factorId: String
    /// Seconds since 1970 after which delivering is pointless (APNs `apns-expiration`, FCM `ttl`).
    public var expiresAt: Int
    /// The keys the app reads; nil is ``Style/verity``.
    public var style: Style?
    /// The keys of a silent notification, which shows nothing (APNs `content-available` with the `background` push
    /// type; an FCM data message with no title): set for app verification, nil for a challenge.
    public var silentData: [String: String]?

    /// Whether the notification is silent.
    var isSilent: Bool { silentData != nil }

    public enum Style: String, Codable, Sendable {
        /// `type: verity.challenge`, `challengeId`, `factorId`: what VerityKit reads.
        case verity
        /// `type: verify_push_challenge`, `challenge_sid`, `factor_sid`, `message`: what apps built on the Twilio
        /// Verify SDKs read, for factors enrolled through the Twilio face.
        case twilio
    }

    /// The custom keys of the notification: APNs puts them beside `aps`, FCM sends them as its data.
    var customKeys: [String: String] {
        if let silentData { return silentData }
        switch style ?? .verity {
        case .verity:
            return ["type": "verity.challenge", "challengeId": challengeId, "factorId": factorId]
        case .twilio:
            return [
                "type": "verify_push_challenge", "challenge_sid": TwilioSID.sid("YC", verityId: challengeId) ?? "",
                "factor_sid": TwilioSID.sid("YF", verityId: factorId) ?? "", "message": body,
            ]
        }
    }

    public init(
        id: String, platform: PushPlatform, token: String, appId: String?, title: String, body: String,
        challengeId: String, factorId: String, expiresAt: Int, style: Style? = nil, silentData: [String: String]? = nil
    ) {
        self.id = id
        self.platform = platform
        self.token = token
        self.appId = appId
        self.title = title
        self.body = body
        self.challengeId = challengeId
        self.factorId = factorId
        self.expiresAt = expiresAt
        self.style = style
        self.silentData = silentData
    }

    /// A silent notification carrying `data` to the app.
    static func silent(
        id: String, platform: PushPlatform, token: String, appId: String?, data: [String: String],
        expiresAt: Int
    ) -> PushNotification {
        PushNotification(
            id: id, platform: platform, token: token, appId: appId, title: "", body: "", challengeId: "", factorId: "",
            expiresAt: expiresAt, silentData: data)
    }
}
