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
}
