import Foundation

/// `PATCH /v1/users/{id}` (API key): every field is optional; an absent field stays as it is.
public struct UpdateUserRequest: Codable, Sendable {
    /// A new name; an empty string removes it.
    public var displayName: String?
    /// Replaces all custom claims; `{}` removes them.
    public var customClaims: [String: JSONValue]?
    /// Replaces all login ids (one or two, as when creating).
    public var loginIds: [String]?

    public init(displayName: String? = nil, customClaims: [String: JSONValue]? = nil, loginIds: [String]? = nil) {
        self.displayName = displayName
        self.customClaims = customClaims
        self.loginIds = loginIds
    }
}
