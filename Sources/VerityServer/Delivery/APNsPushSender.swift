import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOSSL
import VerityCore

/// Sends challenge notifications through APNs' HTTP/2 provider API with token-based authentication.
///
/// Each notification is one `POST /3/device/<device token>` carrying an alert with the `VERITY_CHALLENGE` category
/// (so the app can offer Approve and Deny actions), `mutable-content` (so a notification service extension can verify
/// the challenge), and the challenge and factor IDs. The `apns-id` is derived from the outbox message ID, so a retry
/// reuses it; the `apns-collapse-id` is the challenge ID, so a retried challenge replaces its earlier alert.
///
/// The provider token (an ES256 JWT) is cached and minted again after 50 minutes: APNs refuses tokens older than an
/// hour and throttles tokens that change more often than every 20 minutes.
///
/// APNs speaks only HTTP/2: the `HTTPClient` must keep its default `httpVersion` of `.automatic`, which negotiates
/// HTTP/2 by ALPN.
///
/// Outcomes: 200 is success. 410 (`Unregistered`, `ExpiredToken`) and 400 `BadDeviceToken` or
/// `DeviceTokenNotForTopic` throw ``PushTokenInvalid``. 403 `ExpiredProviderToken` or `InvalidProviderToken` drops the
/// cached provider token and is transient. 429, 5xx, timeouts and network errors are transient. Any other 4xx is
/// permanent, with the reason `apns <status> <reason>`.
public struct APNsPushSender: PushSender {
    /// How long a provider token is used before a new one is minted.
    public static let providerTokenLifetime: Duration = .seconds(50 * 60)
    /// The notification category the app registers with its Approve and Deny actions.
    public static let category = "VERITY_CHALLENGE"

    let configuration: APNsConfiguration
    let provider: ProviderClient
    let signingKey: Result<P256.Signing.PrivateKey, DeliveryError>
    let providerTokens = ProviderCredentialCache()

    /// Creates a sender. A configuration with an unusable key is accepted here, and fails every ``send(_:)``
    /// permanently; call ``APNsConfiguration/validate()`` first to refuse it up front.
    ///
    /// - Parameters:
    ///   - configuration: The account, key, topic and environment.
    ///   - provider: The client (HTTP/2 capable, the default), the logger (never given the private key, the
    ///     provider token or a whole device token) and the clock (the provider token's `iat` and its refresh).
    public init(configuration: APNsConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
        self.signingKey = Result { () throws(DeliveryError) in try configuration.signingKey() }
    }

    /// Sends one notification. Throws ``PushTokenInvalid`` when APNs says the device token is dead, a
    /// ``DeliveryError`` for other failures, or `CancellationError` when the task is cancelled.
    public func send(_ notification: PushNotification) async throws {
        guard notification.platform == .apns else {
            throw DeliveryError(.permanent, "apns sends apns pushes only, not \(notification.platform.rawValue)")
        }
        guard Self.isDeviceToken(notification.token) else {
            throw PushTokenInvalid(reason: "apns device token is not hexadecimal")
        }
        let key = try signingKey.get()
        let topic = notification.appId.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.topic
        guard !topic.isEmpty else { throw DeliveryError(.permanent, "apns needs a topic (bundle ID)") }
        let now = provider.now()
        guard notification.expiresAt > Int(now.timeIntervalSince1970) else {
            throw DeliveryError(.permanent, "apns notification expired before delivery")
        }

        var logger = provider.logger
        logger[metadataKey: "message.id"] = "\(notification.id)"
        logger[metadataKey: "push.token"] = "\(ProviderHTTP.mask(notification.token))"
        let apnsID = Self.apnsID(forMessageID: notification.id)
        logger[metadataKey: "apns.id"] = "\(apnsID)"

        let providerToken = try await self.providerToken(now: now, key: key)
        let origin = configuration.resolvedBaseURL(for: notification.apnsEnvironment)
        var request = HTTPClientRequest(url: "\(origin)/3/device/\(notification.token)")
        request.method = .POST
        if !configuration.certificateVerification {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            request.tlsConfiguration = tls
        }
        request.headers.add(name: "authorization", value: "bearer \(providerToken)")
        request.headers.add(name: "apns-topic", value: topic)
        // A silent notification must be a background push at priority 5, or APNs refuses it.
        request.headers.add(name: "apns-push-type", value: notification.isSilent ? "background" : "alert")
        request.headers.add(name: "apns-priority", value: notification.isSilent ? "5" : "10")
        request.headers.add(name: "apns-expiration", value: "\(notification.expiresAt)")
        request.headers.add(name: "apns-id", value: apnsID)
        if !notification.isSilent, notification.challengeId.utf8.count <= 64 {
            request.headers.add(name: "apns-collapse-id", value: notification.challengeId)
        }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try Self.payload(notification)))

        let (response, body) = try await provider.exchange(
            request, provider: "apns", timeout: configuration.timeout, logger: logger)
        let status = Int(response.status.code)
        let reason = try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)).reason
        let metadata: Logger.Metadata = [
            "http.status": "\(status)",
            "http.version": "\(response.version)",
            "apns.reason": "\(reason ?? "none")",
            "apns.unique_id": "\(response.headers.first(name: "apns-unique-id") ?? "none")",
        ]
        try await Self.outcome(status: status, reason: reason).settle(
            provider: "apns", logger: logger, metadata: metadata
        ) {
            await providerTokens.invalidate(providerToken)
        }
    }

    /// The cached provider token, or a fresh one when the cached one is 50 minutes old.
    func providerToken(now: Date, key: P256.Signing.PrivateKey) async throws -> String {
        let teamID = configuration.teamID
        let keyID = configuration.keyID
        let logger = provider.logger
        return try await providerTokens.value(now: now) {
            let issuedAt = Int(now.timeIntervalSince1970)
            do {
                let token = try ProviderToken.apns(teamID: teamID, keyID: keyID, issuedAt: issuedAt, key: key)
                logger.debug("minted apns provider token", metadata: ["apns.key_id": "\(keyID)", "iat": "\(issuedAt)"])
                let lifetime = TimeInterval(Self.providerTokenLifetime.components.seconds)
                return ProviderCredential(
                    value: token, refreshAfter: Date(timeIntervalSince1970: TimeInterval(issuedAt) + lifetime))
            } catch {
                throw DeliveryError(.permanent, "apns provider token could not be signed")
            }
        }
    }

    /// Maps an APNs status and `reason` (from the JSON error body) to a ``PushOutcome``.
    static func outcome(status: Int, reason: String?) -> PushOutcome {
        let description = ["apns", "\(status)", reason].compactMap { $0 }.joined(separator: " ")
        switch (status, reason) {
        case (200, _):
            return .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .tokenInvalid(description)
        case (403, "ExpiredProviderToken"), (403, "InvalidProviderToken"):
            return .credentialRejected(description)
        case (429, _), (500..<600, _):
            return .failed(.transient, description)
        case (400..<500, _):
            return .failed(.permanent, description)
        default:
            return .failed(.transient, description)
        }
    }

    /// Whether `token` can be an APNs device token: a non-empty, even number of hexadecimal digits (32 bytes today,
    /// up to 100 bytes allowed for the future), which also keeps it from changing the request path.
    static func isDeviceToken(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty, bytes.count % 2 == 0, bytes.count <= 200 else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                UInt8(ascii: "A")...UInt8(ascii: "F"):
                true
            default:
                false
            }
        }
    }

    /// The `apns-id` for an outbox message: a version-8 UUID (RFC 9562) made of the first 128 bits of
    /// SHA-256(`"verity-apns-id:" + messageID`), in lowercase canonical form. The same message always gets the same
    /// ID, so APNs' logs and answers tie every retry to one notification.
    static func apnsID(forMessageID messageID: String) -> String {
        var bytes = Array(SHA256.hash(data: Data("verity-apns-id:\(messageID)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let characters = Array(Hex.encode(bytes))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// The JSON payload: the alert, sound, `mutable-content`, category, and Verity's custom keys; for a silent
    /// notification only `content-available` and the keys.
    static func payload(_ notification: PushNotification) throws -> [UInt8] {
        let payload = Payload(
            aps: notification.isSilent
                ? .silent
                : .init(
                    alert: .init(title: notification.title, body: notification.body),
                    category: notification.style == .twilio ? "verify_push_challenge" : APNsPushSender.category),
            custom: notification.customKeys
        )
        return try ProviderJSON.encode(payload, sortedKeys: false, what: "apns payload")
    }

    struct Payload: Encodable {
        struct APS: Encodable {
            struct Alert: Encodable {
                var title: String
                var body: String
            }

            var alert: Alert?
            var sound: String? = "default"
            var mutableContent: Int? = 1
            var category: String?
            var contentAvailable: Int?

            /// Wakes the app without showing anything.
            static let silent = APS(alert: nil, sound: nil, mutableContent: nil, category: nil, contentAvailable: 1)

            enum CodingKeys: String, CodingKey {
                case alert, sound, category
                case mutableContent = "mutable-content"
                case contentAvailable = "content-available"
            }
        }

        var aps: APS
        /// `type` and the ids, beside `aps` (``PushNotification/customKeys``).
        var custom: [String: String]

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(aps, forKey: Key(stringValue: "aps"))
            for (key, value) in custom.sorted(by: { $0.key < $1.key }) {
                try container.encode(value, forKey: Key(stringValue: key))
            }
        }
    }

    /// APNs' error body: `{"reason": "BadDeviceToken"}`, with a `timestamp` (milliseconds) for 410.
    private struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int64?
    }
}
