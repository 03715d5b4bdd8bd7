import Crypto
import Foundation
import VerityCore

/// Secret API keys: `vk_` + 256 random bits; only their SHA-256 (``SecretHash``) is stored.
enum APIKeySecret {
    static let prefix = "vk_"

    /// Whether `secret` has a key's shape (`vk_`, at most 128 characters): anything else is refused before it is
    /// hashed and looked up.
    static func isWellFormed(_ secret: String) -> Bool {
        secret.hasPrefix(prefix) && secret.count <= 128
    }
}
