import AsyncHTTPClient
import Crypto
import Foundation
import Logging

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
