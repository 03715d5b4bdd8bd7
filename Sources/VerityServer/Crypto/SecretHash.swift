import Crypto
import Foundation
import VerityCore

/// How bearer secrets (API keys, enrollment, refresh and possession tokens) are stored: SHA-256, lowercase hex. They
/// carry 256 random bits, so a plain hash is enough to make a copy of the database useless.
enum SecretHash {
    static func hex(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Data(secret.utf8)))
    }
}
