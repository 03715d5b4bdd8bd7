import Crypto
import Foundation

/// Why a public key in base64 DER form was refused.
public enum PublicKeyEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not standard (RFC 4648 §4) base64.
    case invalidBase64
    /// The bytes are not a DER SubjectPublicKeyInfo holding a valid P-256 public key.
    case invalidKey

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .invalidBase64: "The public key is not standard base64."
        case .invalidKey: "The public key is not a DER-encoded P-256 SubjectPublicKeyInfo."
        }
    }
}
