import Foundation

/// A user of a project: someone who signs in with one of their login ids.
///
/// Login ids are normalised the way verifications normalise destinations: phone numbers to E.164, email addresses
/// with their domain lowercased (the local part keeps its case). Within a project a login id belongs to at most one
/// user; email addresses are compared without regard to case.
public struct User: Codable, Sendable, Equatable {
    /// `usr_…`
    public var id: String
    /// The user's login ids: at most one email address and at most one E.164 phone number, email first. Empty for the
    /// user behind a Twilio Verify Passkeys entity, which signs in only through that face.
    public var loginIds: [String]
    /// A name to show, if any.
    public var displayName: String?
    /// Claims added to the user's session tokens; never one of the registered claim names.
    public var customClaims: [String: JSONValue]
    /// A disabled user cannot sign in.
    public var disabled: Bool
    public var createdAt: Date
    /// The last successful sign-in, if any.
    public var lastSignInAt: Date?
    /// The names of the project roles the user holds, sorted.
    public var roles: [String]

    public init(
        id: String, loginIds: [String], displayName: String? = nil, customClaims: [String: JSONValue] = [:],
        disabled: Bool = false, createdAt: Date, lastSignInAt: Date? = nil, roles: [String] = []
    ) {
        self.id = id
        self.loginIds = loginIds
        self.displayName = displayName
        self.customClaims = customClaims
        self.disabled = disabled
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
        self.roles = roles
    }
}
