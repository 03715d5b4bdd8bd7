import Foundation

/// What a new proof-of-possession key signs when it replaces the old one.
public struct KeyRotationProof: Codable, Sendable, Equatable {
    /// The `typ` header of the proof.
    public static let tokenType = "verity-key-rotation+jws"
    /// The factor whose key is replaced.
    public var factorId: String
    /// The new key, exactly as in ``RotateFactorKeyRequest/publicKey``.
    public var publicKey: String

    public init(factorId: String, publicKey: String) {
        self.factorId = factorId
        self.publicKey = publicKey
    }
}
