import Foundation

/// A signed-in session: what OTP verify, refresh and step-up answer.
public struct AuthResponse: Codable, Sendable, Equatable {
    /// The session token: a short-lived ES256 JWT that backends validate offline against the project's JWKS.
    public var sessionJwt: String
    /// When ``sessionJwt`` expires.
    public var sessionExpiresAt: Date
    /// The new refresh token (`vrt_…`); the one presented to refresh is dead from now on. Absent after a step-up,
    /// which keeps the refresh token.
    public var refreshToken: String?
    /// When the refresh token expires unless it is used (each refresh extends the session).
    public var refreshExpiresAt: Date
    public var user: User
    /// Whether this sign-in created the user.
    public var firstSeen: Bool

    public init(
        sessionJwt: String, sessionExpiresAt: Date, refreshToken: String?, refreshExpiresAt: Date, user: User,
        firstSeen: Bool
    ) {
        self.sessionJwt = sessionJwt
        self.sessionExpiresAt = sessionExpiresAt
        self.refreshToken = refreshToken
        self.refreshExpiresAt = refreshExpiresAt
        self.user = user
        self.firstSeen = firstSeen
    }
}
