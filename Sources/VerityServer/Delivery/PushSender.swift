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

/// Delivers push notifications of one platform.
public protocol PushSender: Sendable {
    /// Sends one notification. Throws ``DeliveryError``; `.permanent` stops retries. A token the platform says
    /// is no longer valid (APNs 410 Unregistered, FCM UNREGISTERED) throws ``PushTokenInvalid``.
    func send(_ notification: PushNotification) async throws
}

/// The platform reported that the device token is dead: the factor must stop receiving pushes.
public struct PushTokenInvalid: Error, Sendable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "push token invalid: \(reason)" }
}

/// What a push platform's answer means for the notification.
enum PushOutcome: Equatable {
    case delivered
    /// The device token is dead.
    case tokenInvalid(String)
    /// The platform refused the server's own credential (an APNs provider token, an FCM access token).
    case credentialRejected(String)
    case failed(DeliveryError.Kind, String)

    /// Logs the outcome and throws what it means: ``PushTokenInvalid`` for a dead token, a transient
    /// ``DeliveryError`` after `dropCredential` for a refused credential (the retry gets a new one), the failure's
    /// own ``DeliveryError`` otherwise.
    ///
    /// - Parameter provider: `apns` or `fcm`, the first word of each log line.
    func settle(
        provider: String, logger: Logger, metadata: Logger.Metadata, dropCredential: () async -> Void
    ) async throws {
        switch self {
        case .delivered:
            logger.debug("\(provider) accepted notification", metadata: metadata)
        case .tokenInvalid(let description):
            logger.debug("\(provider) reports the device token is invalid", metadata: metadata)
            throw PushTokenInvalid(reason: description)
        case .credentialRejected(let description):
            logger.debug("\(provider) rejected the server's credential; a new one will be obtained", metadata: metadata)
            await dropCredential()
            throw DeliveryError(.transient, description)
        case .failed(let kind, let description):
            logger.debug("\(provider) refused notification", metadata: metadata)
            throw DeliveryError(kind, description)
        }
    }
}
