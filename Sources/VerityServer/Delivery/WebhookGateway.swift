import Foundation

/// A customer's own SMS or voice gateway, as the webhook senders reach it: its URL and secret, and the client that
/// posts to it. The SMS and voice senders differ only in what they accept and in the message's speech.
struct WebhookGateway: Sendable {
    let configuration: WebhookSMSConfiguration
    let provider: ProviderClient

    /// Posts `message` (with what a call says, for `speech`) as a ``WebhookGatewayMessage``, signed with the
    /// gateway's secret; throws ``DeliveryError`` (or `CancellationError` when the task is cancelled).
    ///
    /// - Parameter what: What the message is in a failure's reason (`sms`, `call`).
    func post(_ message: OutgoingMessage, speech: OutgoingMessage.Speech? = nil, what: String) async throws {
        try await SignedWebhookPost(httpClient: provider.httpClient, logger: provider.logger, now: provider.now).post(
            url: configuration.url, secret: configuration.secret, json: WebhookGatewayMessage(message, speech: speech),
            messageId: message.id, timeout: configuration.timeout, what: what)
    }
}
