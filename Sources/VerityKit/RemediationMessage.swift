import Foundation
import VerityCore

/// What went wrong on the way to an answer, as a ``RemediationStep/message(_:)``.
public enum RemediationMessage: Sendable, Equatable {
    /// The owner cancelled, failed or could not do the prompt. For a `required` challenge the app may deny (the
    /// result is signed and reported) or put it off; nothing else approves it. For `preferred`, an explicit
    /// ``RemediationDecision/approve`` approves with the silent key and reports the result; after a cancelled or
    /// failed prompt ``RemediationDecision/proceed`` leaves the challenge pending, and only when the device cannot
    /// verify its owner (`unavailable`) does it approve as `approve` does.
    case userVerificationFailed(UserVerificationResult)
    /// The challenge requires user verification and this factor has no user-verification key
    /// (``VerityPush/addUserVerificationKey(factorId:enrollmentToken:)`` adds one).
    case userVerificationKeyMissing
}
