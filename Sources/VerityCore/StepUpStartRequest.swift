import Foundation

/// `POST /v1/auth/stepup/start` (with the session token): every field is optional.
public struct StepUpStartRequest: Codable, Sendable, Equatable {
    /// Which second factor; by default push when the user has a verified push factor, then TOTP when they have a
    /// verified TOTP factor, otherwise a code.
    public var method: StepUpMethod?
    /// A BCP 47 language tag for the code message.
    public var locale: String?
    /// How an `otp` code to a phone number goes: `sms` (the default), `voice` or `whatsapp`.
    public var channel: Channel?

    public init(method: StepUpMethod? = nil, locale: String? = nil, channel: Channel? = nil) {
        self.method = method
        self.locale = locale
        self.channel = channel
    }
}
