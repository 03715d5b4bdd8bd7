import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// Hands SMS to a customer's own gateway over a signed HTTP webhook.
///
/// Each message is one `POST` of `Content-Type: application/json`:
///
/// ```
/// {"body":"Your code is 123456","channel":"sms","id":"msg_…","to":"+14155550100"}
/// ```
///
/// with two headers:
/// - `Verity-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over `"<t>.<raw body>"` (see ``WebhookSignature``),
///   so the gateway can check the sender and reject replays;
/// - `Verity-Message-Id: <id>`, the same on every retry of one message, so the gateway can drop duplicates.
///
/// A 2xx answer is success. 408, 429, 5xx, network errors and timeouts are transient; any other status is permanent,
/// with the reason `webhook <status>`.
public struct WebhookSMSSender: MessageSender {
    /// The name of the header that carries the outbox message id.
    public static let messageIDHeaderName = SignedWebhookPost.messageIDHeaderName

    let gateway: WebhookGateway

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The gateway URL and the signing secret.
    ///   - provider: The client, the logger (never given the secret, the message body or the phone number) and the
    ///     clock that timestamps signatures.
    public init(configuration: WebhookSMSConfiguration, provider: ProviderClient) {
        gateway = WebhookGateway(configuration: configuration, provider: provider)
    }

    /// Sends one SMS through the gateway. Throws a ``DeliveryError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .sms else {
            throw DeliveryError(.permanent, "webhook sends sms only, not \(message.channel.rawValue)")
        }
        try await gateway.post(message, what: "sms")
    }
}
