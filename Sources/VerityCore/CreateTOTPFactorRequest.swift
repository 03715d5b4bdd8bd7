import Foundation

/// `POST /v1/users/{userId}/factors/totp` (API key).
public struct CreateTOTPFactorRequest: Codable, Sendable {
    public var friendlyName: String
    /// `SHA1` (default), `SHA256` or `SHA512`.
    public var algorithm: String?
    /// 6 (default) to 8.
    public var digits: Int?
    /// Used as the issuer in the `otpauth://` URI; defaults to the project's name.
    public var issuer: String?

    public init(friendlyName: String, algorithm: String? = nil, digits: Int? = nil, issuer: String? = nil) {
        self.friendlyName = friendlyName
        self.algorithm = algorithm
        self.digits = digits
        self.issuer = issuer
    }
}
