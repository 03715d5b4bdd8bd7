import Crypto
import Foundation

/// An error type with a case for each way ``CompactJWS/init(parsing:)`` refuses a token, so that a verifier can parse
/// with ``CompactJWS/init(parsing:failingWith:)`` and throw its own errors.
public protocol JWSParsingFailure: Error {
    /// The token is not a well-formed compact JWS (``JWSError/malformed``).
    static var malformed: Self { get }
    /// The token is not signed with ES256 (``JWSError/unsupportedAlgorithm``).
    static var unsupportedAlgorithm: Self { get }
}
