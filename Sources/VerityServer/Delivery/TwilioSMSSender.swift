import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// Sends SMS through Twilio's Messaging API.
///
/// Each message is one `POST {baseURL}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded, with HTTP Basic
/// auth. A 2xx answer (Twilio answers 201 with the new Message resource) is success. 429 and 5xx answers, network
/// errors and timeouts are transient; any other 4xx is permanent, with the reason `twilio <status> <code>` (for
/// example `twilio 400 21211` for an invalid `To` number).
///
/// Twilio has no idempotency key for creating messages, so a retry after a lost response may send a second SMS.
public struct TwilioSMSSender: SubmittingMessageSender {
    /// The account's Messages API.
    let messages: TwilioREST

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The account, sender and endpoint.
    ///   - provider: The client and the logger (never given the auth token, the message body or the full phone
    ///     number).
    public init(configuration: TwilioConfiguration, provider: ProviderClient) {
        messages = TwilioREST(configuration: configuration, provider: provider)
    }

    /// Sends one SMS and returns its Message SID (`SM…`).
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        guard message.channel == .sms else {
            throw DeliveryError(.permanent, "twilio sends sms only, not \(message.channel.rawValue)")
        }
        return try await messages.createMessage(
            to: message.to, content: [("Body", message.body)], messageID: message.id, sender: "twilio", what: "sms")
    }
}
