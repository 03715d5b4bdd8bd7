/// Why authenticator data (WebAuthn §6.1) or an attestation object (§6.5) was refused.
enum AuthenticatorDataError: Error, Sendable, Hashable {
    /// Shorter than its fixed part, or than a length it announces.
    case truncated
    /// Bytes follow the last part the flags announce.
    case trailingBytes
    /// A credential id longer than the 1023 bytes WebAuthn allows.
    case credentialIDTooLong
    /// The attested credential data's public key is not a usable COSE key.
    case invalidPublicKey(COSEKeyError)
    /// The extensions (or the attestation object) are not well-formed CBOR.
    case malformedCBOR(CBORError)
    /// The attestation object lacks `fmt`, `attStmt` or `authData`, or one has the wrong type.
    case malformedAttestationObject
}
