import Foundation
import SQLKit

/// The Firebase face's names for projects.
struct FirebaseProjectStore: Sendable {
    let database: Database

    private static let columns = "project_id, firebase_project_id, api_key, created_at"

    /// Names a project for the Firebase face, or renames it (its API key stays); nil when the Firebase project id
    /// names another project already.
    func name(_ link: FirebaseProject) async throws -> FirebaseProject? {
        try await database.transaction { sql in
            let taken = try await sql.raw(
                """
                SELECT project_id FROM firebase_projects
                WHERE firebase_project_id = \(bind: link.firebaseProjectId) AND project_id <> \(bind: link.projectId)
                """
            ).first()
            guard taken == nil else { return nil }
            return try await sql.raw(
                """
                INSERT INTO firebase_projects (\(unsafeRaw: Self.columns))
                VALUES (\(bind: link.projectId), \(bind: link.firebaseProjectId), \(bind: link.apiKey),
                        \(bind: link.createdAt.storedValue))
                ON CONFLICT (project_id) DO UPDATE SET firebase_project_id = excluded.firebase_project_id
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.link(from:))
        }
    }

    func link(projectId: String) async throws -> FirebaseProject? {
        try await link(where: "project_id", is: projectId)
    }

    func link(apiKey: String) async throws -> FirebaseProject? {
        try await link(where: "api_key", is: apiKey)
    }

    func link(firebaseProjectId: String) async throws -> FirebaseProject? {
        try await link(where: "firebase_project_id", is: firebaseProjectId)
    }

    /// The names of the project whose `column` (one of the table's unique columns) is `value`.
    private func link(where column: String, is value: String) async throws -> FirebaseProject? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM firebase_projects WHERE \(unsafeRaw: column) = \(bind: value)
                """
            ).first().map(Self.link(from:))
        }
    }

    private static func link(from row: any SQLRow) throws -> FirebaseProject {
        FirebaseProject(
            projectId: try row.decode(column: "project_id", as: String.self),
            firebaseProjectId: try row.decode(column: "firebase_project_id", as: String.self),
            apiKey: try row.decode(column: "api_key", as: String.self), createdAt: try row.date("created_at"))
    }
}
