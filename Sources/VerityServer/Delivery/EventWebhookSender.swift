import AsyncHTTPClient
import Crypto
import Foundation
import Logging

/// One event for the project's webhook endpoint (`challenge.approved`, `challenge.denied`, `challenge.expired`).
public struct WebhookEvent: Sendable, Equatable {
    /// The outbox message id, sent as `Verity-Message-Id`.
    public var id: String
    public var url: String
    public var secret: String
    /// The JSON event document; for ``Format/twilio``, a JSON object of the event's parameters.
    public var body: String
    public var format = Format.verity

    public enum Format: Sendable, Equatable {
        /// Verity's JSON event, signed in `Verity-Signature`.
        case verity
        /// A Twilio Verify Push event: the parameters form-encoded, signed in `X-Twilio-Signature`.
        case twilio
    }

    public init(id: String, url: String, secret: String, body: String, format: Format = .verity) {
        self.id = id
        self.url = url
        self.secret = secret
        self.body = body
        self.format = format
    }
}

/// Delivers webhook events.
public protocol EventSender: Sendable {
    func send(_ event: WebhookEvent) async throws
}

/// Posts events to the project's endpoint, signed with the project's webhook secret, only to public addresses
/// (``OutboundAddressPolicy``) and never following a redirect.
public struct HTTPEventSender: EventSender {
    /// The process's client for tenants' endpoints: it never follows a redirect, so a public endpoint cannot bounce
    /// a webhook to an address the policy refuses. Like `HTTPClient.shared`, it lives as long as the process.
    public static let webhookClient = HTTPClient(
        eventLoopGroupProvider: .singleton,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))

    let post: SignedWebhookPost

    public init(
        httpClient: HTTPClient = HTTPEventSender.webhookClient, addresses: OutboundAddressPolicy = .init(),
        logger: Logger, now: @escaping @Sendable () -> Date = Date.init
    ) {
        post = SignedWebhookPost(httpClient: httpClient, addresses: addresses, logger: logger, now: now)
    }

    public func send(_ event: WebhookEvent) async throws {
        switch event.format {
        case .verity:
            try await post.post(
                url: event.url, secret: event.secret, body: Array(event.body.utf8), messageId: event.id,
                timeout: .seconds(15), what: "event")
        case .twilio:
            guard let params = try? JSONDecoder().decode([String: String].self, from: Data(event.body.utf8)) else {
                throw DeliveryError(.permanent, "the Twilio event is not a JSON object of strings")
            }
            let fields = params.sorted { $0.key < $1.key }
            try await post.send(
                url: event.url, body: Array(FormEncoding.encode(fields).utf8),
                headers: [
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    (
                        "X-Twilio-Signature",
                        TwilioWebhookSignature.signature(url: event.url, params: fields, key: event.secret)
                    ),
                ],
                messageId: event.id, timeout: .seconds(15), what: "Twilio event")
        }
    }
}

/// How Twilio signs the requests it makes: base64 of HMAC-SHA1, keyed by the auth token, over the URL followed by
/// each parameter's name and value in name order. Twilio's helper libraries check it (`RequestValidator`); Verity
/// keys it with the project's webhook signing secret.
enum TwilioWebhookSignature {
    static func signature(url: String, params: [(String, String)], key: String) -> String {
        let data = params.sorted { $0.0 < $1.0 }.reduce(url) { $0 + $1.0 + $1.1 }
        let mac = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(data.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Data(mac).base64EncodedString()
    }
}
