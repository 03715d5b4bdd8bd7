import Foundation

/// The answer to an OTP start: where the code went, never the code.
public struct OTPStartResponse: Codable, Sendable, Equatable {
    /// The pending sign-in verification (`ver_…`); `POST /v1/auth/otp/verify` accepts it instead of the login id.
    public var verificationId: String
    public var channel: Channel
    /// The destination with most characters hidden, for example `+1******4567` or `j***@example.com`.
    public var maskedDestination: String
    /// When the code stops working.
    public var expiresAt: Date
    /// Whether this request sent a message (false for a test number, or with `resend: false` and a pending code).
    public var sent: Bool

    public init(verificationId: String, channel: Channel, maskedDestination: String, expiresAt: Date, sent: Bool) {
        self.verificationId = verificationId
        self.channel = channel
        self.maskedDestination = maskedDestination
        self.expiresAt = expiresAt
        self.sent = sent
    }
}
