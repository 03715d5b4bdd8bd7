import Foundation

/// `POST /v1/roles` (API key).
public struct CreateRoleRequest: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    public var permissions: [String]?

    public init(name: String, description: String? = nil, permissions: [String]? = nil) {
        self.name = name
        self.description = description
        self.permissions = permissions
    }
}
