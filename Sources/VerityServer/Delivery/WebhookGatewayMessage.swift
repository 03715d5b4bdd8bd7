import Foundation

/// The JSON body the SMS and voice webhooks post to a customer's gateway: the message, and for a call what is said
/// (`language`, `lines`, and the `code` for a provider with its own wording). An SMS leaves those out.
struct WebhookGatewayMessage: Encodable {
    var id: String
    var channel: String
    var to: String
    var body: String
    var language: String?
    var lines: [String]?
    var code: String?

    init(_ message: OutgoingMessage, speech: OutgoingMessage.Speech? = nil) {
        id = message.id
        channel = message.channel.rawValue
        to = message.to
        body = message.body
        language = speech?.language
        lines = speech?.lines
        code = speech == nil ? nil : message.code
    }

    /// Posts this message to the gateway `configuration` names, signed with its secret, through `provider`; throws
    /// ``DeliveryError`` (or `CancellationError` when the task is cancelled).
    ///
    /// - Parameter what: What the message is in a failure's reason (`sms`, `call`).
    func post(to configuration: WebhookSMSConfiguration, through provider: ProviderClient, what: String) async throws {
        try await SignedWebhookPost(httpClient: provider.httpClient, logger: provider.logger, now: provider.now).post(
            url: configuration.url, secret: configuration.secret, json: self, messageId: id,
            timeout: configuration.timeout, what: what)
    }
}
