import Crypto
import Foundation
import Logging
import VerityCore

/// Reads providers' delivery-status callbacks: checks their signatures, and gives up a code message a provider
/// reports undeliverable for good, which sends its code by the project's fallback channel (``CodeFallback``).
///
/// Statuses of messages Verity does not know (another system's, or given up already) are acknowledged and ignored,
/// so a repeated report changes nothing.
struct DeliveryStatusReceiver: Sendable, UsesRuntime {
    let settings: DeliveryStatusSettings
    private let store: OutboxStore
    let fallback: CodeFallback
    let runtime: Runtime

    init(
        settings: DeliveryStatusSettings, store: OutboxStore, fallback: CodeFallback, runtime: Runtime
    ) {
        self.settings = settings
        self.store = store
        self.fallback = fallback
        self.runtime = runtime
    }

    /// What one status report did.
    enum Outcome: Sendable, Equatable {
        /// Not a permanent failure (sent, delivered, read, a temporary error): nothing changes.
        case noted
        /// No sent code message has that provider id (unknown, or already given up).
        case unknownMessage
        /// The message was given up; its code went by the fallback channel when there is one.
        case gaveUp(CodeFallback.Outcome)
    }

    // MARK: Meta (WhatsApp Cloud API)

    /// Answers Meta's subscription check: `hub.challenge` when the mode is `subscribe` and the verify token is the
    /// configured one.
    func metaSubscriptionChallenge(mode: String?, verifyToken: String?, challenge: String?) throws -> String {
        guard let expected = settings.metaVerifyToken else {
            throw Self.metaNotConfigured
        }
        guard mode == "subscribe", let verifyToken, let challenge,
            CodeGenerator.constantTimeEquals(verifyToken, expected)
        else { throw VerityError(.forbidden, "The verify token is not this server's.") }
        return challenge
    }

    /// Reads one signed Meta webhook: every `failed` status with a permanent error gives its message up.
    ///
    /// - Parameters:
    ///   - body: The raw request body, exactly as received (the signature covers these bytes).
    ///   - signature: The `X-Hub-Signature-256` header, `sha256=<hex HMAC-SHA256 keyed by the app secret>`.
    @discardableResult
    func receiveMeta(body: [UInt8], signature: String?) async throws -> [Outcome] {
        let (secret, signature) = try metaSecret(signature: signature)
        guard Self.metaSignatureIsValid(signature, body: body, secret: secret) else {
            throw Self.wrongMetaSignature
        }
        let notification: MetaNotification
        do {
            notification = try JSONDecoder().decode(MetaNotification.self, from: Data(body))
        } catch {
            throw VerityError(.malformedJSON, "The body is not a WhatsApp Business Account notification.")
        }
        var outcomes: [Outcome] = []
        for status in notification.statuses {
            guard status.status == "failed" else {
                outcomes.append(.noted)
                continue
            }
            let codes = (status.errors ?? []).compactMap(\.code)
            guard Self.metaFailureIsPermanent(codes: codes) else {
                // Meta tried and gave up for now (throttling, a temporary outage): not a reason to switch channels.
                logger.info(
                    "meta reported a temporary whatsapp failure",
                    metadata: ["meta.codes": "\(codes.map(String.init).joined(separator: ","))"])
                outcomes.append(.noted)
                continue
            }
            let reason = (["meta failed"] + codes.prefix(1).map(String.init)).joined(separator: " ")
            outcomes.append(try await undelivered(providerMessageId: status.id, reason: reason))
        }
        return outcomes
    }

    /// The app secret and the request's signature (see ``credentials(_:signature:notConfigured:wrongSignature:)``).
    func metaSecret(signature: String?) throws -> (secret: String, signature: String) {
        try Self.credentials(
            settings.metaAppSecret, signature: signature, notConfigured: Self.metaNotConfigured,
            wrongSignature: Self.wrongMetaSignature)
    }

    /// `sha256=<hex>` against the HMAC-SHA256 of `body`, compared in constant time.
    static func metaSignatureIsValid(_ header: String, body: [UInt8], secret: String) -> Bool {
        let prefix = "sha256="
        guard header.lowercased().hasPrefix(prefix) else { return false }
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return CodeGenerator.constantTimeEquals(String(header.dropFirst(prefix.count)).lowercased(), Hex.encode(mac))
    }

    /// A failed status is final for its message; it is worth another channel unless its error is one Meta documents
    /// as temporary (the codes ``MetaWhatsAppSender`` retries). A failure without a code counts as permanent.
    static func metaFailureIsPermanent(codes: [Int]) -> Bool {
        !codes.contains { MetaWhatsAppSender.transientCodes.contains($0) }
    }

    // MARK: Twilio (Messages and Calls)

    /// Reads one signed Twilio status callback for a message (`MessageSid`, `MessageStatus`) or a call (`CallSid`,
    /// `CallStatus`).
    ///
    /// A message `failed` or `undelivered`, and a call `failed`, `busy` or `no-answer`, is permanent: Twilio does
    /// not try again, and a code nobody heard is worth another channel. `canceled` is Verity's own doing (or an
    /// operator's), so it changes nothing.
    ///
    /// - Parameters:
    ///   - url: The full URL Twilio posted to (the configured `StatusCallback`, query included).
    ///   - parameters: The form-encoded POST parameters as received.
    ///   - signature: The `X-Twilio-Signature` header.
    @discardableResult
    func receiveTwilio(url: String, parameters: [(String, String)], signature: String?) async throws -> Outcome {
        let (token, signature) = try twilioToken(signature: signature)
        let expected = TwilioWebhookSignature.signature(url: url, params: parameters, key: token)
        guard CodeGenerator.constantTimeEquals(signature, expected) else {
            throw Self.wrongTwilioSignature
        }
        func value(_ name: String) -> String? { parameters.first { $0.0 == name }?.1 }
        let errorCode = value("ErrorCode").map { " \($0)" } ?? ""
        if let sid = value("MessageSid"), let status = value("MessageStatus") ?? value("SmsStatus") {
            guard ["failed", "undelivered"].contains(status) else { return .noted }
            return try await undelivered(providerMessageId: sid, reason: "twilio \(status)\(errorCode)")
        }
        if let sid = value("CallSid"), let status = value("CallStatus") {
            guard ["failed", "busy", "no-answer"].contains(status) else { return .noted }
            return try await undelivered(providerMessageId: sid, reason: "twilio call \(status)\(errorCode)")
        }
        throw VerityError(
            .invalidRequest, "The callback names no MessageSid with MessageStatus or CallSid with CallStatus.")
    }

    /// The auth token and the request's signature (see ``credentials(_:signature:notConfigured:wrongSignature:)``).
    func twilioToken(signature: String?) throws -> (token: String, signature: String) {
        try Self.credentials(
            settings.twilioAuthToken, signature: signature, notConfigured: Self.twilioNotConfigured,
            wrongSignature: Self.wrongTwilioSignature)
    }

    // MARK: Authenticating a callback

    /// A provider's secret and the request's signature, or the refusal of a callback that cannot be authenticated:
    /// callbacks not configured (404, `notConfigured`) or no signature (401, `wrongSignature`, as a wrong one is
    /// refused). Checked before the body is read, and again with it.
    private static func credentials(
        _ secret: String?, signature: String?, notConfigured: VerityError, wrongSignature: VerityError
    ) throws -> (String, String) {
        guard let secret else { throw notConfigured }
        guard let signature else { throw wrongSignature }
        return (secret, signature)
    }

    private static let metaNotConfigured = VerityError(
        .notFound, "WhatsApp Cloud API status callbacks are not configured.")
    private static let wrongMetaSignature = VerityError(
        .invalidSignature, "X-Hub-Signature-256 does not sign this body with the app secret.")
    private static let twilioNotConfigured = VerityError(.notFound, "Twilio status callbacks are not configured.")
    private static let wrongTwilioSignature = VerityError(
        .invalidSignature, "X-Twilio-Signature does not sign this request with the auth token.")

    // MARK: The rule

    private func undelivered(providerMessageId: String, reason: String) async throws -> Outcome {
        guard let message = try await store.sentCodeMessage(providerMessageId: providerMessageId),
            let delivery = try await store.delivery(for: message)
        else { return .unknownMessage }
        let outcome = try await fallback.giveUp(message, delivery: delivery, reason: reason)
        var metadata: Logger.Metadata = [
            "message": "\(message.id)", "channel": "\(message.channel.rawValue)", "reason": "\(reason)",
        ]
        switch outcome {
        case .fellBack(let channel):
            metrics.messageDelivered(channel: message.channel, outcome: "dead")
            metadata["fallback"] = "\(channel.rawValue)"
            logger.error(
                "Provider reported the message undeliverable; its code goes by the fallback channel", metadata: metadata
            )
        case .gaveUp:
            metrics.messageDelivered(channel: message.channel, outcome: "dead")
            logger.error("Provider reported the message undeliverable", metadata: metadata)
        case .alreadyGivenUp:
            break
        }
        return .gaveUp(outcome)
    }

    /// The parts of Meta's webhook that carry message statuses:
    /// `{"object":"whatsapp_business_account","entry":[{"changes":[{"value":{"statuses":[{"id":"wamid.…",
    /// "status":"failed","errors":[{"code":131026,…}]}]}}]}]}`.
    struct MetaNotification: Decodable {
        var object: String?
        var entry: [Entry]?

        var statuses: [Status] {
            (entry ?? []).flatMap { ($0.changes ?? []).flatMap { $0.value?.statuses ?? [] } }
        }

        struct Entry: Decodable {
            var changes: [Change]?
        }

        struct Change: Decodable {
            var value: Value?
        }

        struct Value: Decodable {
            var statuses: [Status]?
        }

        struct Status: Decodable {
            var id: String
            var status: String
            var errors: [MetaError]?
        }

        struct MetaError: Decodable {
            var code: Int?
        }
    }
}
