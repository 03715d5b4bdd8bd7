import Foundation

/// A new TOTP factor: the secret is shown this once, for the authenticator app.
public struct CreatedTOTPFactor: Codable, Sendable, Equatable {
    public var factor: Factor
    /// Base32 (RFC 4648), what authenticator apps call the key.
    public var secret: String
    /// `otpauth://totp/…`, usually shown as a QR code.
    public var uri: String

    public init(factor: Factor, secret: String, uri: String) {
        self.factor = factor
        self.secret = secret
        self.uri = uri
    }
}
