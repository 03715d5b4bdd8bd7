import Foundation
import SQLKit
import VerityCore

/// A project's roles and which users hold them.
struct RoleStore: Sendable {
    let database: Database

    /// Why a write was not made.
    enum WriteError: Error {
        case roleExists
        case roleNotFound
    }

    func insert(_ role: Role, projectId: String) async throws {
        try await database.execute { sql in
            guard
                try await sql.raw(
                    """
                    INSERT INTO roles (project_id, name, description, permissions, created_at)
                    VALUES (\(bind: projectId), \(bind: role.name), \(bind: role.description),
                            \(bind: try storedJSON(role.permissions)), \(bind: role.createdAt.storedValue))
                    ON CONFLICT (project_id, name) DO NOTHING
                    RETURNING name
                    """
                ).first() != nil
            else { throw WriteError.roleExists }
        }
    }

    func roles(projectId: String) async throws -> [Role] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT name, description, permissions, created_at FROM roles
                WHERE project_id = \(bind: projectId) ORDER BY name
                """
            ).all().map(Self.role(from:))
        }
    }

    /// Changes a role's description and permissions (nil leaves them); nil when there is no such role.
    func update(name: String, projectId: String, description: String??, permissions: [String]?) async throws
        -> Role?
    {
        let encoded = try permissions.map { try storedJSON($0) }
        return try await database.transaction { sql in
            guard
                var role = try await sql.raw(
                    """
                    UPDATE roles SET permissions = COALESCE(\(bind: encoded), permissions)
                    WHERE project_id = \(bind: projectId) AND name = \(bind: name)
                    RETURNING name, description, permissions, created_at
                    """
                ).first().map(Self.role(from:))
            else { return nil }
            if let description {
                try await sql.raw(
                    """
                    UPDATE roles SET description = \(bind: description)
                    WHERE project_id = \(bind: projectId) AND name = \(bind: name)
                    """
                ).run()
                role.description = description
            }
            return role
        }
    }

    /// Deletes a role and takes it from every user; false when there was no such role.
    func delete(name: String, projectId: String) async throws -> Bool {
        try await database.transaction { sql in
            try await sql.raw(
                "DELETE FROM user_roles WHERE project_id = \(bind: projectId) AND role_name = \(bind: name)"
            ).run()
            return try await sql.raw(
                "DELETE FROM roles WHERE project_id = \(bind: projectId) AND name = \(bind: name) RETURNING name"
            ).first() != nil
        }
    }

    /// Runs `body` as one unit of work: a user's roles change with what the caller joins to it.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Gives roles to user `userId`, all or nothing, in `work`; a role the user holds already is kept. Throws
    /// ``WriteError/roleNotFound`` when the project has no role of a name.
    func grant(_ names: [String], userId: String, projectId: String, in work: UnitOfWork) async throws {
        try await database.execute(in: work) { sql in
            for name in names {
                guard
                    try await sql.raw(
                        "SELECT name FROM roles WHERE project_id = \(bind: projectId) AND name = \(bind: name)"
                    ).first() != nil
                else { throw WriteError.roleNotFound }
                try await sql.raw(
                    """
                    INSERT INTO user_roles (project_id, user_id, role_name)
                    VALUES (\(bind: projectId), \(bind: userId), \(bind: name))
                    ON CONFLICT (user_id, role_name) DO NOTHING
                    """
                ).run()
            }
        }
    }

    /// Takes a role from user `userId` in `work` (nothing happens when the user does not hold it).
    func take(_ name: String, userId: String, projectId: String, in work: UnitOfWork) async throws {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                DELETE FROM user_roles
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) AND role_name = \(bind: name)
                """
            ).run()
        }
    }

    /// The union of the permissions of a user's roles, sorted.
    func permissions(userId: String, projectId: String) async throws -> [String] {
        try await database.lookup { sql in
            var permissions = Set<String>()
            for row in try await sql.raw(
                """
                SELECT r.permissions FROM user_roles u
                JOIN roles r ON r.project_id = u.project_id AND r.name = u.role_name
                WHERE u.project_id = \(bind: projectId) AND u.user_id = \(bind: userId)
                """
            ).all() {
                permissions.formUnion(try row.json("permissions", as: [String].self) ?? [])
            }
            return permissions.sorted()
        }
    }

    // MARK: - Helpers

    private static func role(from row: any SQLRow) throws -> Role {
        Role(
            name: try row.decode(column: "name", as: String.self),
            description: try row.decode(column: "description", as: String?.self),
            permissions: try row.json("permissions", as: [String].self) ?? [],
            createdAt: try row.date("created_at"))
    }
}
