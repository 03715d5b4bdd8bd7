import Foundation
import VerityCore

/// Sends WhatsApp codes through Twilio's Messaging API with a Content Template.
///
/// Each message is one `POST {baseURL}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded, with HTTP Basic
/// auth: `To=whatsapp:+14155550100`, `From=whatsapp:+…` (or `MessagingServiceSid`), `ContentSid=HX…` and
/// `ContentVariables={"1":"123456"}`. A business may only start a WhatsApp conversation with an approved template,
/// so there is no free-text `Body`. Answers map to outcomes as for SMS (see ``TwilioREST``): a refused recipient,
/// such as `twilio 400 63024`, is permanent.
public struct TwilioWhatsAppSender: SubmittingMessageSender {
    let configuration: TwilioWhatsAppConfiguration
    let provider: ProviderClient

    /// Creates a sender.
    public init(configuration: TwilioWhatsAppConfiguration, provider: ProviderClient) {
        self.configuration = configuration
        self.provider = provider
    }

    /// Sends one WhatsApp message and returns its Message SID (`SM…` or `MM…`).
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        guard message.channel == .whatsapp, let code = message.code else {
            throw DeliveryError(
                .permanent, "twilio whatsapp sends whatsapp codes only, not \(message.channel.rawValue)")
        }
        let contentSID = configuration.contentSIDsByLanguage[message.language] ?? configuration.contentSID
        return try await TwilioREST(configuration: configuration.account, provider: provider).createMessage(
            to: message.to,
            content: [("ContentSid", contentSID), ("ContentVariables", Self.contentVariables(code: code))],
            address: Self.address, messageID: message.id, sender: "twilio whatsapp", what: "whatsapp")
    }

    /// A WhatsApp address as Twilio writes it: `whatsapp:` and the E.164 number.
    static func address(_ number: String) -> String {
        number.hasPrefix("whatsapp:") ? number : "whatsapp:\(number)"
    }

    /// `{"1":"<code>"}`: the code is the template's only variable (its body and its copy-code button).
    static func contentVariables(code: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? String(decoding: encoder.encode(["1": code]), as: UTF8.self)) ?? #"{"1":"\#(code)"}"#
    }
}
