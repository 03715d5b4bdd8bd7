import Crypto
import Foundation

/// The claims of a token a device signs with its key to authenticate itself (for example to fetch pending
/// challenges), carried as the payload of an ES256 ``CompactJWS`` with `typ` `"JWT"`.
public struct DeviceTokenClaims: Codable, Sendable, Equatable {
    /// The subject: the identifier of the factor (device key) that signed the token.
    public var sub: String
    /// When the token was issued, in seconds since 1970-01-01T00:00:00Z.
    public var iat: Int
    /// When the token expires, in seconds since 1970-01-01T00:00:00Z.
    public var exp: Int
    /// A unique token identifier, so a server can refuse replays.
    public var jti: String

    /// Creates claims.
    ///
    /// - Parameters:
    ///   - sub: The factor identifier.
    ///   - iat: The issue time, in seconds since the Unix epoch.
    ///   - exp: The expiry time, in seconds since the Unix epoch.
    ///   - jti: A unique token identifier.
    public init(sub: String, iat: Int, exp: Int, jti: String) {
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.jti = jti
    }
}
