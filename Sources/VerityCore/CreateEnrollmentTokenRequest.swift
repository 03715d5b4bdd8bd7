import Foundation

/// `POST /v1/enrollment-tokens` (API key): lets one app install enroll a push factor for one user.
public struct CreateEnrollmentTokenRequest: Codable, Sendable {
    /// The customer's own identifier for the user (1–128 characters), or a Verity `usr_` id.
    public var userId: String
    /// Seconds the token stays valid (60–3600, default 600).
    public var expiresIn: Int?

    public init(userId: String, expiresIn: Int? = nil) {
        self.userId = userId
        self.expiresIn = expiresIn
    }
}
