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
    let configuration: TwilioConfiguration
    let provider: ProviderClient

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The account, sender and endpoint.
    ///   - provider: The client and the logger (never given the auth token, the message body or the full phone
    ///     number).
    public init(configuration: TwilioConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
    }

    /// Sends one SMS and returns its Message SID (`SM…`).
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        guard message.channel == .sms else {
            throw DeliveryError(.permanent, "twilio sends sms only, not \(message.channel.rawValue)")
        }
        let senderFields = configuration.senderFields()
        guard !senderFields.isEmpty else {
            throw DeliveryError(.permanent, "twilio needs a From number or a MessagingServiceSid")
        }
        let fields = [("To", message.to)] + senderFields + [("Body", message.body)]
        return try await TwilioREST(configuration: configuration, provider: provider).create(
            "Messages", fields: fields, messageID: message.id, what: "sms")
    }

    /// `{baseURL}/2010-04-01/Accounts/{AccountSid}/Messages.json`.
    var messagesURL: String {
        TwilioREST(configuration: configuration, provider: provider).url("Messages")
    }
}

extension TwilioConfiguration {
    /// Who a message is from: `From` (written as `address` makes it), `MessagingServiceSid`, or both; empty when the
    /// account names neither.
    func senderFields(address: (String) -> String = { $0 }) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let from, !from.isEmpty { fields.append(("From", address(from))) }
        if let messagingServiceSID, !messagingServiceSID.isEmpty {
            fields.append(("MessagingServiceSid", messagingServiceSID))
        }
        return fields
    }
}
