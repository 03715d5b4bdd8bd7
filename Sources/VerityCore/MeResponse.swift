import Foundation

/// `GET /v1/auth/me`: the signed-in user and what the session says about them.
public struct MeResponse: Codable, Sendable, Equatable {
    public var user: User
    /// The union of the permissions of the user's roles.
    public var permissions: [String]
    /// The session (`ses_…`).
    public var sessionId: String
    /// How the session was authenticated, for example `["otp", "sms"]`.
    public var amr: [String]
    /// `mfa` once the session was stepped up with a second factor.
    public var acr: String?

    public init(user: User, permissions: [String], sessionId: String, amr: [String], acr: String?) {
        self.user = user
        self.permissions = permissions
        self.sessionId = sessionId
        self.amr = amr
        self.acr = acr
    }
}
