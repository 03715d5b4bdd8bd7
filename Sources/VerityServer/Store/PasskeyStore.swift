import Foundation
import SQLKit
import VerityCore

/// Passkeys and their ceremonies' challenges (kept as their SHA-256, deleted as they are used).
struct PasskeyStore: Sendable {
    let database: Database

    /// The user a challenge was issued for (nil for a sign-in that named nobody, and for a sign-up, whose user does
    /// not exist yet and is named by `signUp`), the one passkey it allows (nil: any of the user's), and the face's
    /// transaction.
    struct ChallengeBinding: Sendable, Equatable {
        var userId: String?
        var signUp: PasskeySignUp? = nil
        var passkeyId: String? = nil
        var transaction: String? = nil
        /// Claims the client asked the session the answer opens or steps up to carry (checked), if any.
        var sessionClaims: [String: JSONValue]? = nil
    }

    private static let columns =
        """
        id, project_id, user_id, credential_id, public_key, sign_count, backup_eligible, backed_up, transports, \
        aaguid, attestation_format, friendly_name, created_at, last_used_at
        """

    /// Runs `body` as one unit of work.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    private static let challenges = SingleUseChallengeTable(name: "passkey_challenges")

    /// Stores a new challenge for `ceremony` and `userId` (or the user a `signUp` will create), with the claims the
    /// session its answer opens or steps up is to carry, and drops the project's challenges that expired.
    func insertChallenge(
        hash: String, ceremony: String, userId: String?, signUp: PasskeySignUp? = nil, passkeyId: String?,
        transaction: String?, sessionClaims: [String: JSONValue]? = nil, projectId: String, expiresAt: Date,
        now: Date
    ) async throws {
        let claims = try sessionClaims.map {
            String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
        }
        try await Self.challenges.insert(
            """
            INSERT INTO passkey_challenges (
                project_id, challenge_hash, ceremony, user_id, new_user_id, new_login_ids, passkey_id,
                transaction_id, session_claims, expires_at)
            VALUES (\(bind: projectId), \(bind: hash), \(bind: ceremony), \(bind: userId),
                    \(bind: signUp?.userId), \(bind: signUp?.loginIds.joined(separator: ",")),
                    \(bind: passkeyId), \(bind: transaction), \(bind: claims), \(bind: expiresAt.storedValue))
            """,
            projectId: projectId, now: now, on: database)
    }

    /// Uses the challenge up: its binding when it was issued in `projectId` for `ceremony`, unused and unexpired;
    /// nil otherwise. One statement, so of two concurrent uses one wins.
    func consumeChallenge(hash: String, ceremony: String, projectId: String, now: Date, in work: UnitOfWork)
        async throws -> ChallengeBinding?
    {
        try await work.sql.raw(
            """
            DELETE FROM passkey_challenges
            WHERE project_id = \(bind: projectId) AND challenge_hash = \(bind: hash) AND ceremony = \(bind: ceremony)
              AND expires_at > \(bind: now.storedValue)
            RETURNING user_id, new_user_id, new_login_ids, passkey_id, transaction_id, session_claims
            """
        ).first().map { row in
            let claims = try row.decode(column: "session_claims", as: String?.self).map { json in
                guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8)) else {
                    throw StoreError.corruptValue(column: "passkey_challenges.session_claims")
                }
                return claims
            }
            let signUp = try row.decode(column: "new_user_id", as: String?.self).map { id in
                PasskeySignUp(
                    userId: id,
                    loginIds: try row.decode(column: "new_login_ids", as: String?.self)?.split(separator: ",")
                        .map(String.init) ?? [],
                    sessionClaims: claims)
            }
            return ChallengeBinding(
                userId: try row.decode(column: "user_id", as: String?.self), signUp: signUp,
                passkeyId: try row.decode(column: "passkey_id", as: String?.self),
                transaction: try row.decode(column: "transaction_id", as: String?.self), sessionClaims: claims)
        }
    }

    /// The transaction of the unused, unexpired challenge `hash` in `projectId`, if it has one; spends nothing.
    func challengeTransaction(hash: String, projectId: String, now: Date) async throws -> String? {
        try await database.execute { sql in
            try await sql.raw(
                """
                SELECT transaction_id FROM passkey_challenges
                WHERE project_id = \(bind: projectId) AND challenge_hash = \(bind: hash)
                  AND expires_at > \(bind: now.storedValue)
                """
            ).first()?.decode(column: "transaction_id", as: String?.self)
        }
    }

    /// Keeps a newly registered passkey; false, and nothing written, when the project has its credential id already.
    func insert(_ passkey: PasskeyRecord, in work: UnitOfWork) async throws -> Bool {
        try await work.sql.raw(
            """
            INSERT INTO passkeys (\(unsafeRaw: Self.columns))
            VALUES (\(bind: passkey.id), \(bind: passkey.projectId), \(bind: passkey.userId),
                    \(passkey.credentialValues))
            ON CONFLICT (project_id, credential_id) DO NOTHING
            RETURNING id
            """
        ).first() != nil
    }

    /// The user's passkeys, oldest first.
    func passkeys(userId: String, projectId: String, in work: UnitOfWork? = nil) async throws -> [PasskeyRecord] {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM passkeys
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId)
                ORDER BY created_at, id
                """
            ).all().map(PasskeyRecord.init(row:))
        }
    }

    /// The project's passkey with credential id `credentialID`.
    func passkey(credentialID: Data, projectId: String, in work: UnitOfWork? = nil) async throws -> PasskeyRecord? {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM passkeys
                WHERE project_id = \(bind: projectId) AND credential_id = \(bind: Base64URL.encode(credentialID))
                """
            ).first().map(PasskeyRecord.init(row:))
        }
    }

    /// Records a use: the counter moves to `signCount` and BS to `backedUp`. True when the stored counter was
    /// lower, or both are zero (synced passkeys keep none); one conditional statement, so of two concurrent
    /// assertions with one counter only one moves it.
    func recordUse(
        id: String, signCount: UInt32, backedUp: Bool, projectId: String, now: Date, in work: UnitOfWork
    ) async throws -> Bool {
        let count = Int64(signCount)
        return try await work.sql.raw(
            """
            UPDATE passkeys SET sign_count = \(bind: count), backed_up = \(bind: backedUp ? 1 : 0),
                last_used_at = \(bind: now.storedValue)
            WHERE project_id = \(bind: projectId) AND id = \(bind: id)
              AND (sign_count < \(bind: count) OR (sign_count = 0 AND \(bind: count) = 0))
            RETURNING id
            """
        ).first() != nil
    }

    /// Records the security event of an assertion whose counter did not rise (the credential may have been cloned), in
    /// `work`, the one that spent the challenge.
    func recordCounterRegression(eventId: String, passkey: PasskeyRecord, at now: Date, in work: UnitOfWork)
        async throws
    {
        try await work.sql.raw(
            """
            INSERT INTO security_events (id, project_id, user_id, session_id, type, ip_address, created_at, factor_id)
            VALUES (\(bind: eventId), \(bind: passkey.projectId), \(bind: passkey.userId), NULL,
                    \(bind: Self.counterRegressionEvent), NULL, \(bind: now.storedValue), \(bind: passkey.id))
            """
        ).run()
    }

    /// The type of the security event ``recordCounterRegression(eventId:passkey:at:in:)`` records.
    static let counterRegressionEvent = "passkey_counter_regressed"

    /// Renames the passkey `id` of `userId`; false when there is none.
    func rename(id: String, userId: String, projectId: String, to name: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE passkeys SET friendly_name = \(bind: name)
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) AND id = \(bind: id)
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Deletes the passkey `id` of `userId`; false when there is none.
    func delete(id: String, userId: String, projectId: String, in work: UnitOfWork? = nil) async throws -> Bool {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                DELETE FROM passkeys
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) AND id = \(bind: id)
                RETURNING id
                """
            ).first() != nil
        }
    }
}
