import Foundation

/// The credential a registration creates, as authenticator data carries it (WebAuthn §6.5.1).
struct AttestedCredentialData: Sendable {
    /// The authenticator model's AAGUID (16 bytes; all zero for `none` attestation).
    let aaguid: Data
    /// The credential id, at most 1023 bytes.
    let credentialID: Data
    /// The credential public key.
    let publicKey: COSEPublicKey
    /// The COSE_Key bytes as the authenticator sent them, which is what a relying party stores.
    let publicKeyCBOR: Data
}
