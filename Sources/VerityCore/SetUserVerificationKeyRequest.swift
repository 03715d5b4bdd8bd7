import Foundation

/// `PUT /v1/device/factors/{id}/user-verification-key` (device token, so signed by the proof-of-possession key): adds
/// or replaces the factor's user-verification key.
public struct SetUserVerificationKeyRequest: Codable, Sendable {
    /// The P-256 public key, base64 of its DER SubjectPublicKeyInfo.
    public var publicKey: String
    /// To replace a key the factor has: a compact JWS (`typ` ``UserVerificationKeyProof/tokenType``) by the
    /// **current** user-verification key over a ``UserVerificationKeyProof`` for the new one.
    public var proof: String?
    /// Instead of `proof`, and to add a first key: a fresh enrollment token (`vet_…`) the backend minted for the
    /// factor's user; this request spends it.
    public var enrollmentToken: String?

    public init(publicKey: String, proof: String? = nil, enrollmentToken: String? = nil) {
        self.publicKey = publicKey
        self.proof = proof
        self.enrollmentToken = enrollmentToken
    }
}
