import Foundation
import SQLKit

/// Projects and their API keys.
struct ProjectStore: Sendable {
    let database: Database

    private static let projectColumns =
        """
        id, name, code_length, code_ttl_seconds, allowed_countries, created_at, webhook_url, webhook_secret, \
        session_ttl_seconds, refresh_ttl_seconds, possession_ttl_seconds, possession_code_ttl_seconds
        """

    func insert(_ project: Project) async throws {
        try await database.read { sql in
            try await sql.raw(
                """
                INSERT INTO projects (id, name, code_length, code_ttl_seconds, allowed_countries, created_at,
                                      session_ttl_seconds, refresh_ttl_seconds, possession_ttl_seconds,
                                      possession_code_ttl_seconds)
                VALUES (\(bind: project.id), \(bind: project.name), \(bind: project.settings.codeLength),
                        \(bind: project.settings.codeLifetime), \(bind: Self.encode(project.settings.allowedCountries)),
                        \(bind: project.createdAt.storedValue), \(bind: project.settings.sessionLifetime),
                        \(bind: project.settings.refreshLifetime), \(bind: project.settings.possessionLifetime),
                        \(bind: project.settings.possessionCodeLifetime))
                """
            ).run()
        }
    }

    func project(id: String) async throws -> Project? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.projectColumns) FROM projects WHERE id = \(bind: id)")
                .first().map(Self.project(from:))
        }
    }

    func projects() async throws -> [Project] {
        try await database.read { sql in
            try await sql.raw("SELECT \(unsafeRaw: Self.projectColumns) FROM projects ORDER BY created_at, id")
                .all().map(Self.project(from:))
        }
    }

    func update(_ project: Project) async throws {
        try await database.read { sql in
            try await sql.raw(
                """
                UPDATE projects SET name = \(bind: project.name), code_length = \(bind: project.settings.codeLength),
                    code_ttl_seconds = \(bind: project.settings.codeLifetime),
                    allowed_countries = \(bind: Self.encode(project.settings.allowedCountries)),
                    webhook_url = \(bind: project.webhookURL), webhook_secret = \(bind: project.webhookSecret),
                    session_ttl_seconds = \(bind: project.settings.sessionLifetime),
                    refresh_ttl_seconds = \(bind: project.settings.refreshLifetime),
                    possession_ttl_seconds = \(bind: project.settings.possessionLifetime),
                    possession_code_ttl_seconds = \(bind: project.settings.possessionCodeLifetime)
                WHERE id = \(bind: project.id)
                """
            ).run()
        }
    }

    /// The project an unrevoked key belongs to, found by the key's hash.
    func project(forKeyHash hash: String) async throws -> Project? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT p.id, p.name, p.code_length, p.code_ttl_seconds, p.allowed_countries, p.created_at,
                       p.webhook_url, p.webhook_secret, p.session_ttl_seconds, p.refresh_ttl_seconds,
                       p.possession_ttl_seconds, p.possession_code_ttl_seconds
                FROM api_keys k JOIN projects p ON p.id = k.project_id
                WHERE k.secret_hash = \(bind: hash) AND k.revoked_at IS NULL
                """
            ).first().map(Self.project(from:))
        }
    }

    /// The project and id of an unrevoked key, found by the key's hash (the Twilio face checks the key's SID).
    func projectAndKeyId(forKeyHash hash: String) async throws -> (project: Project, keyId: String)? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT k.id AS key_id, p.id, p.name, p.code_length, p.code_ttl_seconds, p.allowed_countries,
                       p.created_at, p.webhook_url, p.webhook_secret, p.session_ttl_seconds, p.refresh_ttl_seconds,
                       p.possession_ttl_seconds, p.possession_code_ttl_seconds
                FROM api_keys k JOIN projects p ON p.id = k.project_id
                WHERE k.secret_hash = \(bind: hash) AND k.revoked_at IS NULL
                """
            ).first().map { row in
                (try Self.project(from: row), try row.decode(column: "key_id", as: String.self))
            }
        }
    }

    func insertKey(_ key: APIKey, secretHash: String) async throws {
        try await database.read { sql in
            try await sql.raw(
                """
                INSERT INTO api_keys (id, project_id, secret_hash, prefix, name, created_at)
                VALUES (\(bind: key.id), \(bind: key.projectId), \(bind: secretHash), \(bind: key.prefix),
                        \(bind: key.name), \(bind: key.createdAt.storedValue))
                """
            ).run()
        }
    }

    func keys(projectId: String) async throws -> [APIKey] {
        try await database.read { sql in
            try await sql.raw(
                """
                SELECT id, project_id, name, prefix, created_at, revoked_at FROM api_keys
                WHERE project_id = \(bind: projectId) ORDER BY created_at, id
                """
            ).all().map { row in
                APIKey(
                    id: try row.decode(column: "id", as: String.self),
                    projectId: try row.decode(column: "project_id", as: String.self),
                    name: try row.decode(column: "name", as: String.self),
                    prefix: try row.decode(column: "prefix", as: String.self),
                    createdAt: try row.date("created_at"), revokedAt: try row.optionalDate("revoked_at"))
            }
        }
    }

    /// Revokes a key of the project; false when the project has no such unrevoked key.
    func revokeKey(id: String, projectId: String, at now: Date) async throws -> Bool {
        try await database.read { sql in
            try await sql.raw(
                """
                UPDATE api_keys SET revoked_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND revoked_at IS NULL
                RETURNING id
                """
            ).first() != nil
        }
    }

    private static func encode(_ countries: [String]?) -> String? {
        countries?.joined(separator: ",")
    }

    private static func project(from row: any SQLRow) throws -> Project {
        let countries = try row.decode(column: "allowed_countries", as: String?.self)
        return Project(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            settings: ProjectSettings(
                codeLength: try row.decode(column: "code_length", as: Int.self),
                codeLifetime: try row.decode(column: "code_ttl_seconds", as: Int.self),
                allowedCountries: countries.map { $0.split(separator: ",").map(String.init) },
                sessionLifetime: try row.decode(column: "session_ttl_seconds", as: Int.self),
                refreshLifetime: try row.decode(column: "refresh_ttl_seconds", as: Int.self),
                possessionLifetime: try row.decode(column: "possession_ttl_seconds", as: Int.self),
                possessionCodeLifetime: try row.decode(column: "possession_code_ttl_seconds", as: Int.self)),
            createdAt: try row.date("created_at"),
            webhookURL: try row.decode(column: "webhook_url", as: String?.self),
            webhookSecret: try row.decode(column: "webhook_secret", as: String?.self))
    }
}
