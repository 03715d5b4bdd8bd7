import VerityCore

/// Why the relying party refused a registration or an authentication answer (WebAuthn Level 3 §7.1, §7.2). Each
/// case maps to one stable ``ErrorCode`` through ``verityError``, so every face words the same refusal.
enum PasskeyRefusal: Error, Sendable, Hashable {
    /// The client data, the attestation object or the authenticator data is not well formed.
    case malformed(String)
    /// The client data's `type` is not the ceremony's (`webauthn.create` or `webauthn.get`).
    case wrongType
    /// The client data's challenge is not the one this ceremony issued.
    case challengeMismatch
    /// The client data's origin is not one of the project's, or the ceremony ran in a cross-origin frame.
    case originNotAllowed
    /// The authenticator scoped the credential to another relying-party id.
    case rpIDMismatch
    /// The UP flag is not set.
    case userNotPresent
    /// The project requires user verification and the UV flag is not set.
    case userVerificationMissing
    /// BS is set without BE, or BE changed since registration.
    case backupFlagsInvalid
    /// The credential public key's algorithm is not ES256, EdDSA or RS256.
    case unsupportedAlgorithm
    /// The attestation statement is not one the project accepts, or does not verify.
    case attestationRefused(String)
    /// An `x5c` attestation does not chain to a root the project trusts, or the project trusts none.
    case attestationUntrusted
    /// The assertion's signature does not verify with the stored public key.
    case invalidSignature
    /// The signature counter did not move forward: a sign that the credential was cloned.
    case counterRegressed
    /// The answer names a credential other than the one the ceremony allows.
    case wrongCredential

    /// The refusal as the server's one error type.
    var verityError: VerityError {
        switch self {
        case .malformed(let what): VerityError(.invalidRequest, "The passkey answer is malformed: \(what).")
        case .wrongType: VerityError(.invalidRequest, "The client data is for another WebAuthn ceremony.")
        case .challengeMismatch:
            VerityError(.challengeNotFound, "The answer is not for a challenge this server issued.")
        case .originNotAllowed: VerityError(.forbidden, "The answer comes from an origin the project does not allow.")
        case .rpIDMismatch: VerityError(.forbidden, "The credential belongs to another relying party.")
        case .userNotPresent: VerityError(.userVerificationRequired, "The authenticator did not see the user.")
        case .userVerificationMissing:
            VerityError(.userVerificationRequired, "The project requires user verification; the authenticator did not.")
        case .backupFlagsInvalid: VerityError(.invalidRequest, "The authenticator's backup flags are inconsistent.")
        case .unsupportedAlgorithm: VerityError(.invalidPublicKey, "The credential key is not ES256, EdDSA or RS256.")
        case .attestationRefused(let why): VerityError(.forbidden, "The attestation is refused: \(why).")
        case .attestationUntrusted:
            VerityError(
                .forbidden,
                "The attestation certificate does not chain to an attestation root the project trusts (it may trust none)."
            )
        case .invalidSignature: VerityError(.invalidSignature, "The assertion's signature does not verify.")
        case .counterRegressed:
            VerityError(.forbidden, "The signature counter went backwards; the credential may have been cloned.")
        case .wrongCredential: VerityError(.wrongFactor, "The answer names a credential this ceremony does not allow.")
        }
    }
}
