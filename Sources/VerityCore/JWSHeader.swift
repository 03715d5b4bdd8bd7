import Crypto
import Foundation

/// The protected header of a ``CompactJWS`` (RFC 7515 §4).
///
/// Only the members Verity uses are modelled; others are ignored when decoding, except `crit`, which makes
/// ``CompactJWS/init(parsing:)`` reject the token because Verity understands no extensions.
public struct JWSHeader: Codable, Sendable, Equatable {
    /// The signature algorithm (`alg`); always `"ES256"` for tokens Verity accepts.
    public var alg: String
    /// The media type of the whole token (`typ`), for example `"JWT"` or `"verity-challenge+jws"`.
    public var typ: String?
    /// The identifier of the signing key (`kid`).
    public var kid: String?
    /// The media type of the payload (`cty`).
    public var cty: String?

    /// Creates a header.
    ///
    /// - Parameters:
    ///   - alg: The signature algorithm.
    ///   - typ: The token type, or `nil` to omit it.
    ///   - kid: The key identifier, or `nil` to omit it.
    ///   - cty: The payload content type, or `nil` to omit it.
    public init(alg: String, typ: String? = nil, kid: String? = nil, cty: String? = nil) {
        self.alg = alg
        self.typ = typ
        self.kid = kid
        self.cty = cty
    }
}
