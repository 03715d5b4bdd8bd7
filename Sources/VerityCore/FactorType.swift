import Foundation

/// What kind of second factor.
public enum FactorType: String, WireEnum, Sendable {
    /// A device key answering push challenges.
    case push
    /// An authenticator app (RFC 6238).
    case totp
}
