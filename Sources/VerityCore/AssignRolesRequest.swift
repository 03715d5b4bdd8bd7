import Foundation

/// `POST /v1/users/{id}/roles` (API key): roles to add to the user.
public struct AssignRolesRequest: Codable, Sendable, Equatable {
    public var roles: [String]

    public init(roles: [String]) {
        self.roles = roles
    }
}
