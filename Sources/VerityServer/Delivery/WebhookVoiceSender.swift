import Foundation
import VerityCore

/// A voice gateway's webhook: the same URL-and-secret settings as the SMS webhook.
public typealias WebhookVoiceConfiguration = WebhookSMSConfiguration

/// Hands calls to a customer's own voice provider over a signed HTTP webhook.
///
/// Each message is one `POST` of `Content-Type: application/json`, signed and identified exactly as the SMS webhook's
/// (`Verity-Signature`, `Verity-Message-Id`; see ``WebhookSMSSender``):
///
/// ```
/// {"body":"Hello. Your Acme verification code is: 1, 2, 3.\nTo repeat: …","channel":"voice","code":"123",
///  "id":"msg_…","language":"en-US","lines":["Hello. Your Acme verification code is: 1, 2, 3.","To repeat: …"],
///  "to":"+14155550100"}
/// ```
///
/// `lines` are said in turn with a pause between them, in a voice of `language`; `code` lets a provider with its own
/// wording speak it. Outcomes are the SMS webhook's: 2xx success; 408, 429, 5xx and network errors transient; any
/// other status permanent (`webhook <status>`).
public struct WebhookVoiceSender: MessageSender {
    let gateway: WebhookGateway

    /// Creates a sender.
    public init(configuration: WebhookVoiceConfiguration, provider: ProviderClient) {
        gateway = WebhookGateway(configuration: configuration, provider: provider)
    }

    /// Hands one call to the gateway. Throws a ``DeliveryError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .voice, let speech = message.speech else {
            throw DeliveryError(.permanent, "voice webhook places calls only, not \(message.channel.rawValue)")
        }
        try await gateway.post(message, speech: speech, what: "call")
    }
}
