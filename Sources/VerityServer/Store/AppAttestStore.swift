import Foundation
import SQLKit

/// App Attest's challenges (kept as their SHA-256, deleted as they are used) and attested keys with their counters.
struct AppAttestStore: Sendable {
    let database: Database

    /// An attested key as stored.
    struct StoredKey: Sendable {
        /// The uncompressed P-256 point.
        var publicKey: Data
        /// The greatest counter an assertion has shown; 0 after the attestation.
        var counter: Int64
        var environment: AppAttestEnvironment
    }

    private static let challenges = SingleUseChallengeTable(name: "app_attest_challenges")

    /// Stores a new challenge, and drops the project's challenges that expired.
    func insertChallenge(hash: String, projectId: String, expiresAt: Date, now: Date) async throws {
        try await Self.challenges.insert(
            """
            INSERT INTO app_attest_challenges (project_id, challenge_hash, expires_at)
            VALUES (\(bind: projectId), \(bind: hash), \(bind: expiresAt.storedValue))
            """,
            projectId: projectId, now: now, on: database)
    }

    /// Uses the challenge up: true when it was issued in `projectId`, unused and unexpired. One statement, so of two
    /// concurrent uses one wins.
    func consumeChallenge(hash: String, projectId: String, now: Date) async throws -> Bool {
        try await database.execute { sql in
            try await Self.challenges.consume(
                hash: hash, projectId: projectId, now: now, returning: "challenge_hash", on: sql) != nil
        }
    }

    /// Keeps a newly attested key with counter 0; false, and nothing written, when the project has the key already.
    func insertKey(
        keyId: String, publicKey: Data, environment: AppAttestEnvironment, projectId: String, now: Date
    ) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO app_attest_keys (project_id, key_id, public_key, counter, environment, created_at)
                VALUES (\(bind: projectId), \(bind: keyId), \(bind: publicKey.base64EncodedString()), 0,
                        \(bind: environment.rawValue), \(bind: now.storedValue))
                ON CONFLICT (project_id, key_id) DO NOTHING
                RETURNING key_id
                """
            ).first() != nil
        }
    }

    func key(keyId: String, projectId: String) async throws -> StoredKey? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT public_key, counter, environment FROM app_attest_keys
                WHERE project_id = \(bind: projectId) AND key_id = \(bind: keyId)
                """
            ).first().map { row in
                guard let publicKey = Data(base64Encoded: try row.decode(column: "public_key", as: String.self)) else {
                    throw StoreError.corruptValue(column: "app_attest_keys.public_key")
                }
                return StoredKey(
                    publicKey: publicKey, counter: try row.decode(column: "counter", as: Int64.self),
                    environment: try row.enumeration("environment", as: AppAttestEnvironment.self))
            }
        }
    }

    /// Moves the key's counter up to `counter`: true when it was lower. One conditional statement, so of two
    /// concurrent assertions with one counter only one moves it.
    func advanceCounter(keyId: String, projectId: String, to counter: Int64) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE app_attest_keys SET counter = \(bind: counter)
                WHERE project_id = \(bind: projectId) AND key_id = \(bind: keyId) AND counter < \(bind: counter)
                RETURNING key_id
                """
            ).first() != nil
        }
    }
}
