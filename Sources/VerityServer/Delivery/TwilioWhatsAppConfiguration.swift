import Foundation
import VerityCore

/// How to send WhatsApp codes through Twilio's Messaging API: the account, the WhatsApp sender and the Content
/// Template (an approved WhatsApp authentication template whose variable `{{1}}` is the code).
public struct TwilioWhatsAppConfiguration: Sendable, CustomStringConvertible {
    /// The account and endpoint; ``TwilioConfiguration/from`` is the WhatsApp sender's number (with or without the
    /// `whatsapp:` prefix), or ``TwilioConfiguration/messagingServiceSID`` a Messaging Service with WhatsApp senders.
    public var account: TwilioConfiguration
    /// The Content Template (`HX…`) sent when the message's language has none of its own.
    public var contentSID: String
    /// Content Templates by message language (`es`, `pt`, …), for templates approved in other languages.
    public var contentSIDsByLanguage: [String: String]

    /// Creates a configuration.
    public init(account: TwilioConfiguration, contentSID: String, contentSIDsByLanguage: [String: String] = [:]) {
        self.account = account
        self.contentSID = contentSID
        self.contentSIDsByLanguage = contentSIDsByLanguage
    }

    /// Describes the configuration with the auth token redacted.
    public var description: String {
        "TwilioWhatsAppConfiguration(account: \(account), contentSID: \(contentSID), "
            + "contentSIDsByLanguage: \(contentSIDsByLanguage))"
    }
}
