import Foundation
import SQLKit
import VerityCore

/// Enrollment tokens, factors and the device-token replay log.
struct FactorStore: Sendable {
    let database: Database

    private static let table = RecordTable(
        name: "factors", columns: FactorRecord.columns, key: "id", scope: "project_id",
        record: FactorRecord.init(row:))

    // MARK: Enrollment tokens

    func insertEnrollmentToken(hash: String, projectId: String, userId: String, now: Date, expiresAt: Date)
        async throws
    {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO enrollment_tokens (token_hash, project_id, user_id, created_at, expires_at)
                VALUES (\(bind: hash), \(bind: projectId), \(bind: userId), \(bind: now.storedValue),
                        \(bind: expiresAt.storedValue))
                """
            ).run()
        }
    }

    /// Forgets the project's enrollment token with this hash, in the caller's unit of work.
    func deleteEnrollmentToken(hash: String, projectId: String, in work: UnitOfWork) async throws {
        try await work.sql.raw(
            "DELETE FROM enrollment_tokens WHERE token_hash = \(bind: hash) AND project_id = \(bind: projectId)"
        ).run()
    }

    /// The project and user of an unexpired enrollment token, and the factor it enrolled, if any.
    func enrollmentToken(hash: String, now: Date) async throws -> (
        projectId: String, userId: String, factorId: String?
    )? {
        try await database.execute { sql in
            try await sql.raw(
                """
                SELECT project_id, user_id, factor_id FROM enrollment_tokens
                WHERE token_hash = \(bind: hash) AND expires_at > \(bind: now.storedValue)
                """
            ).first().map {
                (
                    try $0.decode(column: "project_id", as: String.self),
                    try $0.decode(column: "user_id", as: String.self),
                    try $0.decode(column: "factor_id", as: String?.self)
                )
            }
        }
    }

    /// Inserts a push factor and binds the enrollment token to it, in one transaction; false when the token
    /// already enrolled a factor (a token enrolls one device).
    func insertEnrolledFactor(_ factor: FactorRecord, tokenHash: String) async throws -> Bool {
        try await database.transaction { sql in
            guard
                try await sql.raw(
                    """
                    UPDATE enrollment_tokens SET factor_id = \(bind: factor.id)
                    WHERE token_hash = \(bind: tokenHash) AND factor_id IS NULL
                    RETURNING token_hash
                    """
                ).first() != nil
            else { return false }
            try await insert(factor, in: sql)
            return true
        }
    }

    func insert(_ factor: FactorRecord) async throws {
        try await database.execute { sql in try await insert(factor, in: sql) }
    }

    private func insert(_ factor: FactorRecord, in sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO factors (\(unsafeRaw: FactorRecord.columns))
            VALUES (\(bind: factor.id), \(bind: factor.projectId), \(bind: factor.userId), \(bind: factor.type.rawValue),
                    \(bind: factor.status.rawValue), \(bind: factor.friendlyName), \(bind: factor.publicKey),
                    \(bind: factor.pushPlatform?.rawValue), \(bind: factor.pushToken), \(bind: factor.appId),
                    \(bind: factor.sdkVersion), \(bind: factor.nonce), \(bind: factor.enrollmentTokenHash),
                    \(bind: factor.totpSecret), \(bind: factor.totpAlgorithm), \(bind: factor.totpDigits),
                    \(bind: factor.totpPeriod), \(bind: factor.totpLastCounter), \(bind: factor.createdAt.storedValue),
                    \(bind: factor.verifiedAt?.storedValue), \(bind: try Self.stored(factor.metadata)),
                    \(bind: factor.userVerificationKey), \(bind: factor.suspendedAt?.storedValue),
                    \(bind: factor.apnsEnvironment?.rawValue))
            """
        ).run()
    }

    /// A factor by id alone: device requests name their factor in the token before any project is known.
    func factor(id: String) async throws -> FactorRecord? {
        try await database.lookup { sql in try await Self.factor(id: id, in: sql) }
    }

    private static func factor(id: String, in sql: any SQLDatabase) async throws -> FactorRecord? {
        try await sql.raw("SELECT \(unsafeRaw: FactorRecord.columns) FROM factors WHERE id = \(bind: id)")
            .first().map(FactorRecord.init(row:))
    }

    func factor(id: String, projectId: String) async throws -> FactorRecord? {
        try await factor(id: id).flatMap { $0.projectId == projectId ? $0 : nil }
    }

    /// Up to `limit` of the user's factors, oldest first, after the factor `after` (the last of the previous page).
    func factors(userId: String, projectId: String, after: String?, limit: Int) async throws -> [FactorRecord] {
        try await database.lookup {
            try await Self.table.page(
                in: projectId, filter: "AND user_id = \(bind: userId)", after: after, limit: limit, on: $0)
        }
    }

    func factors(userId: String, projectId: String) async throws -> [FactorRecord] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: FactorRecord.columns) FROM factors
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) ORDER BY created_at, id
                """
            ).all().map(FactorRecord.init(row:))
        }
    }

    /// Marks an unverified factor verified; nil when it was not unverified.
    /// Marks an unverified factor verified, in the caller's unit of work when given (a face's events commit with
    /// it); nil when it was not unverified.
    func markVerified(id: String, now: Date, in work: UnitOfWork? = nil) async throws -> FactorRecord? {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                UPDATE factors SET status = 'verified', verified_at = \(bind: now.storedValue), nonce = NULL
                WHERE id = \(bind: id) AND status = 'unverified'
                RETURNING \(unsafeRaw: FactorRecord.columns)
                """
            ).first().map(FactorRecord.init(row:))
        }
    }

    /// Runs `body` as one unit of work, for a factor change that other aggregates' changes join.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Changes the given settings; nil leaves one as it is, and empty metadata removes it.
    func update(
        id: String, pushToken: String?, friendlyName: String?, sdkVersion: String? = nil, appId: String? = nil,
        metadata: [String: String]? = nil
    ) async throws -> FactorRecord? {
        let metadataChange: SQLQueryString =
            if let metadata { ", metadata = \(bind: try Self.stored(metadata))" } else { "" }
        return try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE factors SET push_token = COALESCE(\(bind: pushToken), push_token),
                    friendly_name = COALESCE(\(bind: friendlyName), friendly_name),
                    sdk_version = COALESCE(\(bind: sdkVersion), sdk_version), app_id = COALESCE(\(bind: appId), app_id)
                    \(metadataChange)
                WHERE id = \(bind: id)
                RETURNING \(unsafeRaw: FactorRecord.columns)
                """
            ).first().map(FactorRecord.init(row:))
        }
    }

    /// Sets (or, with nil, removes) a push factor's user-verification key; nil when there is no such factor.
    func setUserVerificationKey(_ key: String?, id: String) async throws -> FactorRecord? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE factors SET user_verification_key = \(bind: key)
                WHERE id = \(bind: id) AND type = 'push'
                RETURNING \(unsafeRaw: FactorRecord.columns)
                """
            ).first().map(FactorRecord.init(row:))
        }
    }

    /// What ``setUserVerificationKey(_:of:replacing:spending:now:)`` did.
    enum UserVerificationKeyChange: Sendable {
        case changed(FactorRecord)
        /// The enrollment token is unknown, expired, used, or of another project or user: nothing changed.
        case tokenRefused
        /// The factor's key is no longer the one replaced (or the factor is gone): nothing changed.
        case keyChanged
    }

    /// Sets a push factor's user-verification key while it is still `current`, spending the enrollment token
    /// `tokenHash` (unexpired, unused, of the factor's project and user) when one is given: one transaction, so
    /// neither happens without the other.
    func setUserVerificationKey(
        _ key: String, of factor: FactorRecord, replacing current: String?, spending tokenHash: String?, now: Date
    ) async throws -> UserVerificationKeyChange {
        struct KeyChanged: Error {}
        do {
            return try await database.transaction { sql in
                if let tokenHash {
                    let spent = try await sql.raw(
                        """
                        UPDATE enrollment_tokens SET factor_id = \(bind: factor.id)
                        WHERE token_hash = \(bind: tokenHash) AND project_id = \(bind: factor.projectId)
                          AND user_id = \(bind: factor.userId) AND factor_id IS NULL
                          AND expires_at > \(bind: now.storedValue)
                        RETURNING token_hash
                        """
                    ).first()
                    guard spent != nil else { return .tokenRefused }
                }
                let held: SQLQueryString =
                    current.map { "AND user_verification_key = \(bind: $0)" } ?? "AND user_verification_key IS NULL"
                guard
                    let updated = try await sql.raw(
                        """
                        UPDATE factors SET user_verification_key = \(bind: key)
                        WHERE id = \(bind: factor.id) AND type = 'push' \(held)
                        RETURNING \(unsafeRaw: FactorRecord.columns)
                        """
                    ).first().map(FactorRecord.init(row:))
                else { throw KeyChanged() }  // undoes the token's spending
                return .changed(updated)
            }
        } catch is KeyChanged {
            return .keyChanged
        }
    }

    /// Replaces a push factor's proof-of-possession key, only while it is still `current` (so two rotations signed
    /// by the same old key cannot both win); nil otherwise.
    func rotateKey(id: String, from current: String, to new: String) async throws -> FactorRecord? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE factors SET public_key = \(bind: new)
                WHERE id = \(bind: id) AND type = 'push' AND public_key = \(bind: current)
                RETURNING \(unsafeRaw: FactorRecord.columns)
                """
            ).first().map(FactorRecord.init(row:))
        }
    }

    /// Suspends a factor in the caller's unit of work (a report of unusual activity), keeping an earlier suspension.
    func suspend(id: String, now: Date, in work: UnitOfWork) async throws {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                UPDATE factors SET suspended_at = COALESCE(suspended_at, \(bind: now.storedValue))
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// Forgets a push token the platform declared dead, unless the device has sent a new one since.
    func clearPushToken(id: String, token: String) async throws {
        try await database.execute { sql in
            try await sql.raw(
                "UPDATE factors SET push_token = NULL WHERE id = \(bind: id) AND push_token = \(bind: token)"
            ).run()
        }
    }

    /// Deletes a factor and, in the same transaction, expires its pending challenges now (housekeeping then
    /// reports them as it reports any expiry); false when the project has no such factor.
    ///
    /// - Parameter work: The caller's unit of work, when the factor goes with other aggregates' changes (a Twilio
    ///   entity or service deleted with its factors).
    func delete(id: String, projectId: String, now: Date, in work: UnitOfWork? = nil) async throws -> Bool {
        try await database.transaction(in: work) { sql in
            guard
                try await sql.raw(
                    "DELETE FROM factors WHERE id = \(bind: id) AND project_id = \(bind: projectId) RETURNING id"
                ).first() != nil
            else { return false }
            try await sql.raw(
                """
                UPDATE challenges SET expires_at = \(bind: now.storedValue)
                WHERE factor_id = \(bind: id) AND project_id = \(bind: projectId) AND status = 'pending'
                  AND expires_at > \(bind: now.storedValue)
                """
            ).run()
            return true
        }
    }

    /// Takes a TOTP time step: only a step later than the last one used passes, so a code works once.
    func useTOTPCounter(id: String, counter: Int64) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE factors SET totp_last_counter = \(bind: counter)
                WHERE id = \(bind: id) AND (totp_last_counter IS NULL OR totp_last_counter < \(bind: counter))
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Counts one attempt at the factor's code or proof, unless the factor is locked: `limit` attempts in a row
    /// without a right one lock it, for good while it is unverified, until `unlockBefore` passes its last attempt once
    /// it is verified (the run then starts again). Returns the attempt's place in the run, or nil when locked. One
    /// statement, so concurrent attempts never pass the limit.
    func takeAttempt(id: String, limit: Int, unlockBefore: Date, now: Date) async throws -> Int? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE factors
                SET failed_attempts = CASE WHEN failed_attempts >= \(bind: limit) THEN 1 ELSE failed_attempts + 1 END,
                    last_attempt_at = \(bind: now.storedValue)
                WHERE id = \(bind: id)
                  AND (failed_attempts < \(bind: limit)
                       OR (status = 'verified' AND last_attempt_at <= \(bind: unlockBefore.storedValue)))
                RETURNING failed_attempts
                """
            ).first(decodingColumn: "failed_attempts", as: Int.self)
        }
    }

    /// Ends the factor's run of attempts: the last one was right.
    func clearAttempts(id: String) async throws {
        try await database.execute { sql in
            try await sql.raw("UPDATE factors SET failed_attempts = 0 WHERE id = \(bind: id)").run()
        }
    }

    /// Records a device token's use; false when its `jti` was seen before (a replay).
    func spend(_ use: FactorService.DeviceTokenUse) async throws -> Bool {
        try await database.execute { sql in try await use.spend(in: sql) }
    }

    /// Drops replay records and enrollment tokens nobody can use any more.
    func purgeExpired(before now: Date) async throws {
        try await database.execute { sql in
            try await sql.raw("DELETE FROM device_token_uses WHERE expires_at < \(bind: now.storedValue)").run()
            try await sql.raw(
                "DELETE FROM enrollment_tokens WHERE expires_at < \(bind: now.addingTimeInterval(-86_400).storedValue)"
            ).run()
        }
    }

    /// Metadata as stored: a JSON object, or NULL for none.
    private static func stored(_ metadata: [String: String]?) throws -> String? {
        guard let metadata, !metadata.isEmpty else { return nil }
        return try storedJSON(metadata)
    }
}
