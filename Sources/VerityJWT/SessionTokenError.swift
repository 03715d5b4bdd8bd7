import VerityCore

/// Why a session token was refused by ``SessionVerifier``.
///
/// Each case has a stable ``code`` suitable for logs and for the `code` of an HTTP 401 problem response; the
/// ``description`` is a sentence for people.
public enum SessionTokenError: JWSParsingFailure, Sendable, Equatable, CustomStringConvertible {
    /// The token is not a well-formed compact JWS, has no `kid` header, or its claims are not a JSON object with a
    /// string `sub`, a numeric `exp` and correctly typed registered claims.
    case malformed
    /// The token is not signed with ES256 (for example `none` or `HS256`).
    case unsupportedAlgorithm
    /// No key in the JWKS has the token's `kid`, even after refetching it.
    case unknownKey
    /// The signature does not verify with the key named by `kid`.
    case invalidSignature
    /// The token's `exp` is in the past, beyond the leeway.
    case expired
    /// The token's `nbf` or `iat` is in the future, beyond the leeway.
    case notYetValid
    /// The token's `iss` is missing or not the expected issuer.
    case wrongIssuer
    /// The token's `aud` is missing or does not contain the expected audience.
    case wrongAudience
    /// The JWKS could not be fetched or decoded; `reason` describes the underlying failure.
    case jwksUnavailable(reason: String)

    /// The stable, machine-readable code of the error, for example `"expired"`.
    public var code: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedAlgorithm: "unsupported_algorithm"
        case .unknownKey: "unknown_key"
        case .invalidSignature: "invalid_signature"
        case .expired: "expired"
        case .notYetValid: "not_yet_valid"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .jwksUnavailable: "jwks_unavailable"
        }
    }

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .malformed: "The session token is not a well-formed session JWT."
        case .unsupportedAlgorithm: "The session token is not signed with ES256, the only accepted algorithm."
        case .unknownKey: "The session token is signed with a key that is not in the JWKS."
        case .invalidSignature: "The session token's signature does not verify."
        case .expired: "The session token has expired."
        case .notYetValid: "The session token is not valid yet."
        case .wrongIssuer: "The session token was issued by a different issuer."
        case .wrongAudience: "The session token is meant for a different audience."
        case .jwksUnavailable(let reason): "The JWKS could not be fetched: \(reason)"
        }
    }
}
