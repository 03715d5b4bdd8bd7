import Foundation
import VerityCore

/// Speaks codes in phone calls placed through Twilio's Programmable Voice API.
///
/// Each message is one `POST {baseURL}/2010-04-01/Accounts/{AccountSid}/Calls.json`, form-encoded, with HTTP Basic
/// auth, whose `Twiml` says the call's lines in the message's language with a pause between them:
///
/// ```
/// <Response><Say language="en-US">Hello. Your Acme verification code is: 1, 2, 3, 4, 5, 6.</Say><Pause length="1"/>
/// <Say language="en-US">To repeat: your code is 1, 2, 3, 4, 5, 6. Goodbye.</Say></Response>
/// ```
///
/// The configuration's ``TwilioConfiguration/from`` is the number calls come from (required: Twilio's Calls API has
/// no Messaging Service). Answers map to outcomes as for SMS (see ``TwilioREST``): for example `twilio 400 21215` (the
/// account may not call that region) is permanent. A retry after a lost response may place a second call.
public struct TwilioVoiceSender: SubmittingMessageSender {
    /// The account's Calls API.
    let calls: TwilioREST

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: The account, the number calls come from, and the endpoint.
    ///   - provider: The client and the logger (never given the auth token, what the call says or the full number).
    public init(configuration: TwilioConfiguration, provider: ProviderClient) {
        calls = TwilioREST(configuration: configuration, provider: provider)
    }

    /// Places one call and returns its Call SID (`CA…`).
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        guard message.channel == .voice, let speech = message.speech else {
            throw DeliveryError(.permanent, "twilio voice places calls only, not \(message.channel.rawValue)")
        }
        guard let from = calls.configuration.from, !from.isEmpty else {
            throw DeliveryError(.permanent, "twilio voice needs a From number to call from")
        }
        return try await calls.create(
            "Calls", fields: [("To", message.to), ("From", from), ("Twiml", Self.twiml(speech))],
            messageID: message.id, what: "call")
    }

    /// The TwiML of a call: each line in a `<Say>` in the speech's language, with a one-second `<Pause>` between two.
    static func twiml(_ speech: OutgoingMessage.Speech) -> String {
        let language = speech.language.markupEscaped
        let says = speech.lines.map { #"<Say language="\#(language)">\#($0.markupEscaped)</Say>"# }
        return #"<?xml version="1.0" encoding="UTF-8"?><Response>"#
            + says.joined(separator: #"<Pause length="1"/>"#) + "</Response>"
    }
}
