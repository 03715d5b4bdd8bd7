import Foundation

/// `POST /v1/auth/otp/start`: send a sign-in code to a login id (sign-up-or-in).
public struct OTPStartRequest: Codable, Sendable, Equatable {
    /// An email address or an E.164 phone number; the code goes to it.
    public var loginId: String
    /// `sms`, `voice` or `whatsapp` for a phone number, `email` for an email address; `sms` or `email` from the login
    /// id when absent.
    public var channel: Channel?
    /// A BCP 47 language tag for the message text.
    public var locale: String?
    /// Whether to send the pending code again when one is pending (the default). With `false` a pending code is
    /// returned as it is and nothing is sent (`sent` is false): what a reentrant `verifyPhoneNumber` needs.
    public var resend: Bool?
    /// Claims the session this sign-in opens is to carry in every token it issues, beside the user's custom claims
    /// (which win a name both have: the client chooses these, so they never pass for the backend's): a JSON object
    /// of at most 4 KiB, no registered claim name.
    public var sessionClaims: [String: JSONValue]?

    public init(
        loginId: String, channel: Channel? = nil, locale: String? = nil, resend: Bool? = nil,
        sessionClaims: [String: JSONValue]? = nil
    ) {
        self.loginId = loginId
        self.channel = channel
        self.locale = locale
        self.resend = resend
        self.sessionClaims = sessionClaims
    }
}
