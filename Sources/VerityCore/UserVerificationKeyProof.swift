import Foundation

/// What the current user-verification key signs when a new one replaces it: the owner, not only whoever holds the
/// silent key, agrees to the change.
public struct UserVerificationKeyProof: Codable, Sendable, Equatable {
    /// The `typ` header of the proof.
    public static let tokenType = "verity-uv-key+jws"
    /// The factor whose user-verification key is replaced.
    public var factorId: String
    /// The new key, exactly as in ``SetUserVerificationKeyRequest/publicKey``.
    public var publicKey: String

    public init(factorId: String, publicKey: String) {
        self.factorId = factorId
        self.publicKey = publicKey
    }
}
