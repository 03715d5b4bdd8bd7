import Crypto
import Foundation
import VerityCore

/// A device key held by a ``FactorKeyStore``: how to find it, and its public half.
public struct FactorKeyHandle: Sendable {
    /// The key's name in the store.
    public var reference: String
    /// The public key, registered with the server.
    public var publicKey: P256.Signing.PublicKey
    /// Whether the private key lives in the Secure Enclave.
    public var isHardwareBacked: Bool
    /// Whether using the key needs the owner: a user-verification key (see `FactorKeyType`).
    public var requiresUserVerification = false
}
