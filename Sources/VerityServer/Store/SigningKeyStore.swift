import Foundation
import SQLKit

/// The `signing_keys` table.
struct SigningKeyStore: Sendable {
    let database: Database

    private static let columns = "id, project_id, sealed_private_key, public_key, created_at, retired_at"

    /// Adds `key` and retires the project's other unretired keys at `retireAt` (in the future, so verifiers can
    /// learn the new key before it signs), in one transaction.
    func insert(_ key: SigningKeyRecord, retiringOthersAt retireAt: Date) async throws {
        try await database.transaction { sql in
            try await sql.raw(
                """
                UPDATE signing_keys SET retired_at = \(bind: retireAt.storedValue)
                WHERE project_id = \(bind: key.projectId) AND retired_at IS NULL
                """
            ).run()
            try await sql.raw(
                """
                INSERT INTO signing_keys (id, project_id, sealed_private_key, public_key, created_at)
                VALUES (\(bind: key.id), \(bind: key.projectId), \(bind: key.sealedPrivateKey), \(bind: key.publicKey),
                        \(bind: key.createdAt.storedValue))
                """
            ).run()
        }
    }

    /// The key tokens are signed with at `now`: of those not yet retired, the one retiring soonest (a key with no
    /// retirement time comes last), so a rotated-in key waits until its predecessor retires.
    func current(projectId: String, now: Date) async throws -> SigningKeyRecord? {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM signing_keys
                WHERE project_id = \(bind: projectId)
                  AND (retired_at IS NULL OR retired_at > \(bind: now.storedValue))
                ORDER BY CASE WHEN retired_at IS NULL THEN 1 ELSE 0 END, retired_at, created_at LIMIT 1
                """
            ).first().map(Self.record(from:))
        }
    }

    /// The keys that verify tokens still in date: unretired, or retired after `retiredAfter`. Newest first: the
    /// unretired one, then by retirement, latest first.
    func published(projectId: String, retiredAfter: Date) async throws -> [SigningKeyRecord] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM signing_keys
                WHERE project_id = \(bind: projectId)
                  AND (retired_at IS NULL OR retired_at > \(bind: retiredAfter.storedValue))
                ORDER BY CASE WHEN retired_at IS NULL THEN 0 ELSE 1 END, retired_at DESC, created_at DESC
                """
            ).all().map(Self.record(from:))
        }
    }

    private static func record(from row: any SQLRow) throws -> SigningKeyRecord {
        SigningKeyRecord(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            sealedPrivateKey: try row.decode(column: "sealed_private_key", as: String.self),
            publicKey: try row.decode(column: "public_key", as: String.self),
            createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"))
    }
}
