import Foundation

/// `POST /v1/device/factors/{id}/rotate-key` (device token signed by the current proof-of-possession key): replaces
/// that key. `proof` is a compact ES256 JWS by the **new** key over a ``KeyRotationProof``.
public struct RotateFactorKeyRequest: Codable, Sendable {
    /// The new P-256 public key, base64 of its DER SubjectPublicKeyInfo.
    public var publicKey: String
    /// A compact JWS (`typ` ``KeyRotationProof/tokenType``) signed by the new key.
    public var proof: String

    public init(publicKey: String, proof: String) {
        self.publicKey = publicKey
        self.proof = proof
    }
}
