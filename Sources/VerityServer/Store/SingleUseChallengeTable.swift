import Foundation
import SQLKit

/// A table of single-use challenges (App Attest's, passkey ceremonies'): each kept as its SHA-256 beside its project
/// and expiry, stored as the project's expired ones are dropped, and spent by deleting it.
struct SingleUseChallengeTable: Sendable {
    /// The table: a constant of the store that owns it, never input.
    let name: String

    /// Drops the project's challenges that expired by `now` and runs `insert` (the new challenge with the table's
    /// own columns), in one transaction.
    func insert(_ insert: SQLQueryString, projectId: String, now: Date, on database: Database) async throws {
        try await database.transaction { sql in
            try await sql.raw(
                """
                DELETE FROM \(ident: name)
                WHERE project_id = \(bind: projectId) AND expires_at <= \(bind: now.storedValue)
                """
            ).run()
            try await sql.raw(insert).run()
        }
    }

    /// Uses the challenge up: the row of `column` when it was issued in `projectId`, matches `condition` (an `AND …`
    /// of the table's own columns) and is unexpired; nil otherwise. One statement, so of two concurrent uses one wins.
    func consume(
        hash: String, projectId: String, now: Date, matching condition: SQLQueryString = "", returning column: String,
        on sql: any SQLDatabase
    ) async throws -> (any SQLRow)? {
        try await sql.raw(
            """
            DELETE FROM \(ident: name)
            WHERE project_id = \(bind: projectId) AND challenge_hash = \(bind: hash)\(condition)
              AND expires_at > \(bind: now.storedValue)
            RETURNING \(ident: column)
            """
        ).first()
    }
}
