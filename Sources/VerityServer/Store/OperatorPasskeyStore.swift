import Foundation
import SQLKit
import VerityCore

/// Console operators' passkeys and their ceremonies' challenges (kept as their SHA-256, deleted as they are used).
/// A passkey comes back as a ``PasskeyRecord`` whose `userId` is the operator's id and whose `projectId` is empty:
/// operators belong to the server, not to a project.
struct OperatorPasskeyStore: Sendable {
    let database: Database

    /// Whom a challenge was issued to: the operator, and for a sign-in the hash of the link it was issued for.
    struct ChallengeBinding: Sendable, Equatable {
        var operatorId: String
        var linkHash: String?
    }

    /// The columns of `console_passkeys` under the names ``PasskeyRecord/init(row:)`` reads.
    private static let columns =
        """
        id, '' AS project_id, operator_id AS user_id, credential_id, public_key, sign_count, backup_eligible, \
        backed_up, transports, aaguid, attestation_format, friendly_name, created_at, last_used_at
        """

    /// Runs `body` as one unit of work.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Stores a new challenge and drops the challenges that expired.
    func insertChallenge(
        hash: String, ceremony: String, operatorId: String, linkHash: String?, expiresAt: Date, now: Date
    ) async throws {
        try await database.transaction { sql in
            try await sql.raw(
                "DELETE FROM console_passkey_challenges WHERE expires_at <= \(bind: now.storedValue)"
            ).run()
            try await sql.raw(
                """
                INSERT INTO console_passkey_challenges (challenge_hash, ceremony, operator_id, link_hash, expires_at)
                VALUES (\(bind: hash), \(bind: ceremony), \(bind: operatorId), \(bind: linkHash),
                        \(bind: expiresAt.storedValue))
                """
            ).run()
        }
    }

    /// Uses the challenge up: its binding when it was issued for `ceremony`, unused and unexpired; nil otherwise. One
    /// statement, so of two concurrent uses one wins.
    func consumeChallenge(hash: String, ceremony: String, now: Date, in work: UnitOfWork) async throws
        -> ChallengeBinding?
    {
        try await work.sql.raw(
            """
            DELETE FROM console_passkey_challenges
            WHERE challenge_hash = \(bind: hash) AND ceremony = \(bind: ceremony)
              AND expires_at > \(bind: now.storedValue)
            RETURNING operator_id, link_hash
            """
        ).first().map {
            ChallengeBinding(
                operatorId: try $0.decode(column: "operator_id", as: String.self),
                linkHash: try $0.decode(column: "link_hash", as: String?.self))
        }
    }

    /// Keeps a newly registered passkey; false, and nothing written, when the server has its credential id already.
    func insert(_ passkey: PasskeyRecord, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            INSERT INTO console_passkeys (id, operator_id, credential_id, public_key, sign_count, backup_eligible,
                backed_up, transports, aaguid, attestation_format, friendly_name, created_at, last_used_at)
            VALUES (\(bind: passkey.id), \(bind: passkey.userId), \(passkey.credentialValues))
            ON CONFLICT (credential_id) DO NOTHING
            RETURNING id
            """
        ).first() != nil
    }

    /// The operator's passkeys, oldest first.
    func passkeys(operatorId: String) async throws -> [PasskeyRecord] {
        try await database.execute { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM console_passkeys
                WHERE operator_id = \(bind: operatorId) ORDER BY created_at, id
                """
            ).all().map(PasskeyRecord.init(row:))
        }
    }

    /// The passkey with credential id `credentialID`, whoever's it is.
    func passkey(credentialID: Data, in work: UnitOfWork) async throws -> PasskeyRecord? {
        try await work.sql.raw(
            """
            SELECT \(unsafeRaw: Self.columns) FROM console_passkeys
            WHERE credential_id = \(bind: Base64URL.encode(credentialID))
            """
        ).first().map(PasskeyRecord.init(row:))
    }

    /// Records a use: the counter moves to `signCount` and BS to `backedUp`. True when the stored counter was lower,
    /// or both are zero (synced passkeys keep none); one conditional statement, so of two concurrent assertions with
    /// one counter only one moves it.
    func recordUse(id: String, signCount: UInt32, backedUp: Bool, now: Date, in work: UnitOfWork) async throws -> Bool {
        let count = Int64(signCount)
        return try await work.sql.raw(
            """
            UPDATE console_passkeys SET sign_count = \(bind: count), backed_up = \(bind: backedUp ? 1 : 0),
                last_used_at = \(bind: now.storedValue)
            WHERE id = \(bind: id) AND (sign_count < \(bind: count) OR (sign_count = 0 AND \(bind: count) = 0))
            RETURNING id
            """
        ).first() != nil
    }

    /// Renames the operator's passkey `id`; false when they have none such.
    func rename(id: String, operatorId: String, to name: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE console_passkeys SET friendly_name = \(bind: name)
                WHERE operator_id = \(bind: operatorId) AND id = \(bind: id)
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Deletes the operator's passkey `id`; false when they have none such.
    func delete(id: String, operatorId: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                "DELETE FROM console_passkeys WHERE operator_id = \(bind: operatorId) AND id = \(bind: id) RETURNING id"
            ).first() != nil
        }
    }
}
