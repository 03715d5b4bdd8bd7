import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// Sends challenge notifications through Firebase Cloud Messaging's HTTP v1 API.
///
/// Each notification is one `POST {baseURL}/v1/projects/{project_id}/messages:send` with a data-only message (the
/// app builds the notification, with Approve and Deny actions, from `type`, `challengeId`, `factorId`, `title` and
/// `body`) at high Android priority, with a TTL that ends when the challenge expires.
///
/// Authorization is an OAuth 2.0 access token obtained with the JWT bearer grant (RFC 7523): an RS256 assertion signed
/// with the service account's key is posted to its `token_uri`. The access token is cached until 5 minutes before it
/// expires; concurrent sends share one token request.
///
/// Outcomes: 200 is success. `UNREGISTERED`, and `INVALID_ARGUMENT` about the registration token, throw
/// ``PushTokenInvalid``. 401 drops the cached access token and is transient (except `THIRD_PARTY_AUTH_ERROR`, a
/// Firebase project misconfiguration, which is permanent). 429, 5xx, timeouts and network errors are transient. Any
/// other 4xx is permanent, with the reason `fcm <status> <error code>`. Token endpoint failures read
/// `fcm oauth <status> <error>`: transient for 429 and 5xx, permanent for 4xx (a revoked key or a wrong clock).
///
/// FCM has no idempotency key, so a retry after a lost response may deliver a second data message; the app
/// deduplicates by `challengeId`.
public struct FCMPushSender: PushSender {
    /// The OAuth 2.0 scope of the FCM HTTP v1 API.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// How long before its expiry an access token is replaced.
    public static let refreshMargin: Duration = .seconds(5 * 60)
    /// The longest TTL FCM accepts: 28 days.
    static let maximumTTL = 28 * 24 * 3600

    let configuration: FCMConfiguration
    let provider: ProviderClient
    let serviceAccount: Result<FCMServiceAccount, DeliveryError>
    let accessTokens = ProviderCredentialCache()

    /// Creates a sender. A configuration with an unusable service account is accepted here, and fails every
    /// ``send(_:)`` permanently; call ``FCMConfiguration/validate()`` first to refuse it up front.
    ///
    /// - Parameters:
    ///   - configuration: The service account and endpoint.
    ///   - provider: The client, the logger (never given the private key, the assertion, the access token or a
    ///     whole registration token) and the clock (the assertion's `iat`/`exp`, the access token's expiry and the
    ///     message TTL).
    public init(configuration: FCMConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
        self.serviceAccount = Result { () throws(DeliveryError) in
            try FCMServiceAccount(json: configuration.serviceAccountJSON)
        }
    }

    /// Sends one notification. Throws ``PushTokenInvalid`` when FCM says the registration token is dead, a
    /// ``DeliveryError`` for other failures, or `CancellationError` when the task is cancelled.
    public func send(_ notification: PushNotification) async throws {
        guard notification.platform == .fcm else {
            throw DeliveryError(.permanent, "fcm sends fcm pushes only, not \(notification.platform.rawValue)")
        }
        guard !notification.token.isEmpty else { throw PushTokenInvalid(reason: "fcm registration token is empty") }
        let account = try serviceAccount.get()
        let now = provider.now()
        let ttl = min(notification.expiresAt - Int(now.timeIntervalSince1970), Self.maximumTTL)
        guard ttl > 0 else { throw DeliveryError(.permanent, "fcm notification expired before delivery") }

        var logger = provider.logger
        logger[metadataKey: "message.id"] = "\(notification.id)"
        logger[metadataKey: "push.token"] = "\(ProviderHTTP.mask(notification.token))"

        let accessToken = try await self.accessToken(now: now, account: account)
        var request = HTTPClientRequest(
            url: "\(ProviderHTTP.trimmed(configuration.baseURL))/v1/projects/\(account.projectID)/messages:send")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try Self.body(notification, ttl: ttl)))

        let (response, body) = try await provider.exchange(
            request, provider: "fcm", timeout: configuration.timeout, logger: logger)
        let status = Int(response.status.code)
        if (200..<300).contains(status) {
            let name = try? JSONDecoder().decode(SendResponse.self, from: Data(body.readableBytesView)).name
            logger.debug("fcm accepted message", metadata: ["fcm.name": "\(name ?? "unknown")"])
            return
        }
        let error = try? JSONDecoder().decode(ErrorResponse.self, from: Data(body.readableBytesView)).error
        let metadata: Logger.Metadata = [
            "http.status": "\(status)",
            "fcm.status": "\(error?.status ?? "none")",
            "fcm.error_code": "\(error?.fcmErrorCode ?? "none")",
        ]
        try await Self.outcome(status: status, error: error).settle(provider: "fcm", logger: logger, metadata: metadata)
        {
            await accessTokens.invalidate(accessToken)
        }
    }

    /// The cached access token, or a new one from the token endpoint when the cached one expires within 5 minutes.
    func accessToken(now: Date, account: FCMServiceAccount) async throws -> String {
        let provider = self.provider
        let timeout = configuration.timeout
        return try await accessTokens.value(now: now) {
            try await Self.requestAccessToken(now: now, account: account, provider: provider, timeout: timeout)
        }
    }

    /// Exchanges a signed assertion for an access token (RFC 7523 §2.1).
    static func requestAccessToken(
        now: Date, account: FCMServiceAccount, provider: ProviderClient, timeout: Duration
    ) async throws -> ProviderCredential {
        let logger = provider.logger
        let issuedAt = Int(now.timeIntervalSince1970)
        let claims = ProviderToken.GoogleAssertionClaims(
            iss: account.clientEmail, scope: scope, aud: account.tokenURI, iat: issuedAt, exp: issuedAt + 3600)
        let assertion: String
        do {
            assertion = try ProviderToken.googleAssertion(
                claims: claims, keyID: account.privateKeyID, key: account.privateKey)
        } catch {
            throw DeliveryError(.permanent, "fcm oauth assertion could not be signed")
        }
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        let form = FormEncoding.encode([
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion),
        ])
        request.body = .bytes(ByteBuffer(string: form))

        let (response, body) = try await provider.exchange(
            request, provider: "fcm oauth", timeout: timeout, logger: logger)
        let status = Int(response.status.code)
        let data = Data(body.readableBytesView)
        guard (200..<300).contains(status) else {
            let error = try? JSONDecoder().decode(TokenError.self, from: data)
            let description = ["fcm oauth", "\(status)", error?.error].compactMap { $0 }.joined(separator: " ")
            logger.debug(
                "google token endpoint refused the assertion",
                metadata: ["http.status": "\(status)", "oauth.error": "\(error?.error ?? "none")"]
            )
            let kind: DeliveryError.Kind = (status == 429 || status >= 500 || status < 400) ? .transient : .permanent
            throw DeliveryError(kind, description)
        }
        guard let token = try? JSONDecoder().decode(TokenResponse.self, from: data), !token.accessToken.isEmpty else {
            throw DeliveryError(.transient, "fcm oauth answered without an access_token")
        }
        let lifetime = TimeInterval(token.expiresIn ?? 3600) - TimeInterval(refreshMargin.components.seconds)
        logger.debug("obtained fcm access token", metadata: ["oauth.expires_in": "\(token.expiresIn ?? 3600)"])
        return ProviderCredential(value: token.accessToken, refreshAfter: now.addingTimeInterval(max(0, lifetime)))
    }

    /// Maps an FCM status and error body to a ``PushOutcome``.
    static func outcome(status: Int, error: GoogleError?) -> PushOutcome {
        let code = error?.fcmErrorCode ?? error?.status
        let description = ["fcm", "\(status)", code].compactMap { $0 }.joined(separator: " ")
        if (200..<300).contains(status) { return .delivered }
        if code == "UNREGISTERED" { return .tokenInvalid(description) }
        if status == 400, code == "INVALID_ARGUMENT", error?.isAboutRegistrationToken == true {
            return .tokenInvalid(description)
        }
        switch status {
        case 401 where code == "THIRD_PARTY_AUTH_ERROR":
            return .failed(.permanent, description)
        case 401:
            return .credentialRejected(description)
        case 429, 500..<600:
            return .failed(.transient, description)
        case 400..<500:
            return .failed(.permanent, description)
        default:
            return .failed(.transient, description)
        }
    }

    /// The request body: `{"message":{"token":…,"data":{…},"android":{"priority":"high","ttl":"<ttl>s"}}}`.
    static func body(_ notification: PushNotification, ttl: Int) throws -> [UInt8] {
        let body = SendRequest(
            message: .init(
                token: notification.token,
                data: notification.isSilent
                    ? notification.customKeys
                    : notification.customKeys.merging(
                        ["title": notification.title, "body": notification.body]) { key, _ in key },
                android: .init(priority: "high", ttl: "\(ttl)s")
            )
        )
        return try ProviderJSON.encode(body, what: "fcm message")
    }

    struct SendRequest: Encodable {
        struct Message: Encodable {
            struct Android: Encodable {
                var priority: String
                var ttl: String
            }

            var token: String
            var data: [String: String]
            var android: Android
        }

        var message: Message
    }

    private struct SendResponse: Decodable {
        var name: String?
    }

    private struct ErrorResponse: Decodable {
        var error: GoogleError?
    }

    /// Google's error body (`google.rpc.Status`): `code`, `message`, `status`, and `details`, among them an
    /// `FcmError` with the `errorCode` and a `BadRequest` with `fieldViolations`.
    struct GoogleError: Decodable, Equatable {
        struct Detail: Decodable, Equatable {
            struct FieldViolation: Decodable, Equatable {
                var field: String?
                var description: String?
            }

            var type: String?
            var errorCode: String?
            var fieldViolations: [FieldViolation]?

            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case errorCode, fieldViolations
            }
        }

        var code: Int?
        var message: String?
        var status: String?
        var details: [Detail]?

        /// The `errorCode` of the `FcmError` detail.
        var fcmErrorCode: String? {
            details?.lazy.compactMap(\.errorCode).first
        }

        /// Whether the error names the registration token: a field violation on `message.token`, or a message about
        /// the registration token ("The registration token is not a valid FCM registration token").
        var isAboutRegistrationToken: Bool {
            let fields = details?.flatMap { $0.fieldViolations ?? [] }.compactMap(\.field) ?? []
            if fields.contains("message.token") { return true }
            return message?.lowercased().contains("registration token") == true
        }
    }

    private struct TokenResponse: Decodable {
        var accessToken: String
        var expiresIn: Int?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }
    }

    private struct TokenError: Decodable {
        var error: String?
    }
}
