import Foundation

/// A project role: a name and the permissions it grants.
public struct Role: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    public var permissions: [String]
    public var createdAt: Date

    public init(name: String, description: String? = nil, permissions: [String], createdAt: Date) {
        self.name = name
        self.description = description
        self.permissions = permissions
        self.createdAt = createdAt
    }
}
