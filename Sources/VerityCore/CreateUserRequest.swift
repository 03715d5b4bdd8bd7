import Foundation

/// `POST /v1/users` (API key).
public struct CreateUserRequest: Codable, Sendable {
    /// One or two login ids: an email address, an E.164 phone number, or one of each.
    public var loginIds: [String]
    /// A name to show (at most 200 characters).
    public var displayName: String?
    /// A JSON object of at most 4 KiB; see ``User/customClaims``.
    public var customClaims: [String: JSONValue]?

    public init(loginIds: [String], displayName: String? = nil, customClaims: [String: JSONValue]? = nil) {
        self.loginIds = loginIds
        self.displayName = displayName
        self.customClaims = customClaims
    }
}
