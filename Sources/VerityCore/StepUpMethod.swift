import Foundation

/// How a step-up proves the second factor.
public enum StepUpMethod: String, WireEnum, Sendable {
    /// A code sent to the user's other login id (email after an SMS sign-in, and the other way round).
    case otp
    /// A push challenge to the user's verified push factor, approved on the device.
    case push
    /// A code from the user's authenticator app (a verified TOTP factor); nothing is sent.
    case totp
}
