import Foundation

/// Where a possession check stands.
public enum PossessionStatus: String, WireEnum, Sendable {
    /// Started by the backend; nothing sent yet.
    case created
    /// A code went out and waits to be entered.
    case otpSent = "otp_sent"
    /// The last code entered was wrong; `otp/retry` allows another entry.
    case otpWrong = "otp_wrong"
    /// An instant link went out and waits to be opened and confirmed.
    case linkSent = "link_sent"
    /// Possession proven.
    case succeeded
    /// Ended without proof (too many wrong codes).
    case failed
    /// The flow's 15 minutes (project setting) ran out before it succeeded.
    case expired
}
