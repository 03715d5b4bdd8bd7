import Foundation

/// `POST /v1/verifications`
public struct StartVerificationRequest: Codable, Sendable {
    /// An E.164 phone number for `sms`, `voice` and `whatsapp`, an email address for `email`.
    public var to: String
    public var channel: Channel
    /// A BCP 47 language tag for the message text (`en`, `es`, `fr`, `de`, `pt`, `ja`); others fall back to `en`.
    public var locale: String?

    public init(to: String, channel: Channel, locale: String? = nil) {
        self.to = to
        self.channel = channel
        self.locale = locale
    }
}
