import Foundation

/// How the owner proved their presence before the user-verification key signed (the answer's `amr`, as in RFC 8176).
public enum UserVerificationMethod: String, WireEnum, Sendable {
    /// Face recognition (Face ID).
    case face
    /// A fingerprint (Touch ID).
    case fpt = "fpt"
    /// The device passcode.
    case pin
    /// An iris scan (Optic ID).
    case iris
}
