import Foundation

/// Which of a push factor's two keys signed an answer.
///
/// Every push factor has a silent proof-of-possession key, used without asking the owner. It may also have a
/// user-verification key, whose use needs the owner (on Apple platforms a Secure Enclave key with biometry or
/// passcode access control). A challenge whose ``UserVerification`` is `required` is approved only by the latter.
public enum FactorKeyType: String, WireEnum, Sendable {
    /// The silent key the factor enrolled with; it also signs every device token.
    case proofOfPossession
    /// The key whose use needs the owner's face, fingerprint or passcode.
    case userVerification
}
