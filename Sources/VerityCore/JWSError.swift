import Crypto
import Foundation

/// Why a compact JWS was refused.
///
/// ``description`` is a sentence suitable as the `detail` of an HTTP 400 or 401 problem response.
public enum JWSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token is not three base64url parts, is too long, its header is not a JSON object, it has a `crit`
    /// header, or its signature is not a 64-byte ES256 signature.
    case malformed
    /// The header names an algorithm other than ES256 (including `none` and the HMAC algorithms).
    case unsupportedAlgorithm
    /// The signature does not verify with the expected key.
    case invalidSignature
    /// The payload is not the JSON that was expected.
    case invalidPayload

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .malformed: "The token is not a well-formed compact JWS."
        case .unsupportedAlgorithm: "The token is not signed with ES256, the only accepted algorithm."
        case .invalidSignature: "The token's signature does not verify with the registered key."
        case .invalidPayload: "The token's payload is not the expected JSON."
        }
    }
}
