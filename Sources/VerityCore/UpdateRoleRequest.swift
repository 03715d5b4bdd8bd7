import Foundation

/// `PATCH /v1/roles/{name}` (API key): an absent field stays as it is.
public struct UpdateRoleRequest: Codable, Sendable, Equatable {
    public var description: String?
    /// Replaces all the role's permissions.
    public var permissions: [String]?

    public init(description: String? = nil, permissions: [String]? = nil) {
        self.description = description
        self.permissions = permissions
    }
}
