import Foundation

/// What happened when the device asked its owner to verify, reported (and signed) with the answer.
public enum UserVerificationResult: String, WireEnum, Sendable {
    /// The owner verified; the user-verification key signed.
    case verified
    /// The owner cancelled the prompt.
    case cancelled
    /// The owner tried and was not recognised.
    case failed
    /// The device cannot verify its owner now (no biometry enrolled, locked out, no user-verification key).
    case unavailable
}
