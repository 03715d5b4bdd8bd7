import Foundation
import SQLKit
import VerityCore

/// Verifications and the outbox messages that deliver their codes.
///
/// Every counter moves in one conditional `UPDATE … RETURNING`: the database decides, so concurrent requests on
/// one node or many can never count past a limit or approve twice.
struct VerificationStore: Sendable {
    let database: Database

    static let table = RecordTable(
        name: "verifications", columns: VerificationRecord.columns, key: "id", scope: "project_id",
        record: VerificationRecord.init(row:))

    /// What `startOrResend` did.
    enum StartOutcome: Sendable {
        case created(VerificationRecord, messageId: String)
        case resent(VerificationRecord, messageId: String)
        /// `resend` was false and a verification was pending: nothing was sent.
        case pending(VerificationRecord)
        case sendLimitReached
    }

    /// Starts a verification for the destination and purpose, or re-sends the pending one, and queues the message
    /// — all in one transaction, so a committed verification always has its message in the outbox.
    ///
    /// - Parameters:
    ///   - resend: Whether a pending verification is sent again; when false it is returned untouched.
    ///   - deliver: Whether to queue a message at all (false for test numbers, whose code is fixed).
    ///   - work: A unit of work the caller runs, to do this as part of it; nil for a transaction of its own.
    func startOrResend(
        new candidate: VerificationRecord, maxSends: Int, messageId: String, resend: Bool = true,
        deliver: Bool = true, now: Date, in work: UnitOfWork? = nil
    ) async throws -> StartOutcome {
        let purpose = candidate.purpose.rawValue
        // A start replaces the claims of a pending code, and one without claims clears them: a code carries what
        // its latest start asked for.
        let claims = try candidate.sessionClaims.map(storedJSON)
        let engine = database.engine
        // Most starts are to a destination with nothing pending: insert first, and go on to the look-ups only when a
        // pending verification (perhaps one past its lifetime) is in the way. On PostgreSQL, without a caller's
        // transaction, that insert and its message are one statement on their own: one round trip.
        let insertedAlone = work == nil && engine == .postgres
        if insertedAlone,
            let record = try await database.execute({ sql in
                try await Self.insert(
                    candidate, messageId: deliver ? messageId : nil, now: now, engine: engine, in: sql)
            })
        {
            return .created(record, messageId: messageId)
        }
        return try await database.transaction(in: work) { sql in
            if !insertedAlone,
                let record = try await Self.insert(
                    candidate, messageId: deliver ? messageId : nil, now: now, engine: engine, in: sql)
            {
                return .created(record, messageId: messageId)
            }
            // A pending verification past its lifetime no longer counts as pending.
            try await sql.raw(
                """
                UPDATE verifications SET status = 'expired', updated_at = \(bind: now.storedValue)
                WHERE project_id = \(bind: candidate.projectId) AND purpose = \(bind: purpose)
                  AND destination_key = \(bind: candidate.destinationKey)
                  AND status = 'pending' AND expires_at <= \(bind: now.storedValue)
                """
            ).run()
            // Two tries: the second one runs only when a concurrent start inserted the pending row first.
            for _ in 0..<2 {
                // Without resend, a pending code is answered as it is and never sent again, even when a concurrent
                // start inserted it between this look-up and the insert below (the second try finds it here).
                if !resend {
                    if let row = try await sql.raw(
                        """
                        UPDATE verifications SET session_claims = \(bind: claims)
                        WHERE project_id = \(bind: candidate.projectId) AND purpose = \(bind: purpose)
                          AND destination_key = \(bind: candidate.destinationKey) AND status = 'pending'
                        RETURNING \(unsafeRaw: VerificationRecord.columns)
                        """
                    ).first() {
                        return .pending(try VerificationRecord(row: row))
                    }
                } else if let row = try await sql.raw(
                    """
                    UPDATE verifications
                    SET send_attempts = send_attempts + 1, channel = \(bind: candidate.channel.rawValue),
                        locale = \(bind: candidate.locale), updated_at = \(bind: now.storedValue),
                        session_claims = \(bind: claims),
                        app_proof = COALESCE(\(bind: candidate.appProof?.rawValue), app_proof)
                    WHERE project_id = \(bind: candidate.projectId) AND purpose = \(bind: purpose)
                      AND destination_key = \(bind: candidate.destinationKey)
                      AND status = 'pending' AND send_attempts < \(bind: maxSends)
                    RETURNING \(unsafeRaw: VerificationRecord.columns)
                    """
                ).first() {
                    let record = try VerificationRecord(row: row)
                    if deliver { try await Self.enqueue(sql, messageId: messageId, for: record, now: now) }
                    return .resent(record, messageId: messageId)
                } else if try await sql.raw(
                    """
                    SELECT id FROM verifications
                    WHERE project_id = \(bind: candidate.projectId) AND purpose = \(bind: purpose)
                      AND destination_key = \(bind: candidate.destinationKey) AND status = 'pending'
                    """
                ).first() != nil {
                    return .sendLimitReached
                }
                if let record = try await Self.insert(
                    candidate, messageId: deliver ? messageId : nil, now: now, engine: engine, in: sql)
                {
                    return .created(record, messageId: messageId)
                }
            }
            throw StoreError.corruptValue(column: "verifications.status")
        }
    }

    /// Gives up on a code message that failed for good and sends the same code by `channel` instead, in one
    /// transaction: the failed message is marked dead with `reason`; while its verification is still pending and
    /// unexpired, the verification moves to `channel`, counts a send and gets a message by that channel queued.
    ///
    /// - Returns: The verification as it now is, or nil when it was no longer pending or the message had been given up
    ///   already (nothing was queued).
    func fallBack(
        failedMessageId: String, reason: String, verificationId: String, projectId: String, to channel: Channel,
        messageId: String, now: Date
    ) async throws -> VerificationRecord? {
        try await database.transaction { sql in
            // A message already given up (a provider reporting the same failure twice) falls back no more.
            guard
                try await sql.raw(
                    """
                    UPDATE outbox SET status = 'dead', last_error = \(bind: reason)
                    WHERE id = \(bind: failedMessageId) AND status <> 'dead'
                    RETURNING id
                    """
                ).first() != nil
            else { return nil }
            guard
                let row = try await sql.raw(
                    """
                    UPDATE verifications
                    SET send_attempts = send_attempts + 1, channel = \(bind: channel.rawValue),
                        updated_at = \(bind: now.storedValue)
                    WHERE id = \(bind: verificationId) AND project_id = \(bind: projectId) AND status = 'pending'
                      AND expires_at > \(bind: now.storedValue)
                    RETURNING \(unsafeRaw: VerificationRecord.columns)
                    """
                ).first()
            else { return nil }
            let record = try VerificationRecord(row: row)
            try await Self.enqueue(sql, messageId: messageId, for: record, now: now)
            return record
        }
    }

    /// Inserts `candidate` as the destination's pending verification and queues its message (when `messageId` is
    /// given); nil when one is pending already. On PostgreSQL both inserts are one statement.
    private static func insert(
        _ candidate: VerificationRecord, messageId: String?, now: Date, engine: DatabaseEngine, in sql: any SQLDatabase
    ) async throws -> VerificationRecord? {
        let insert: SQLQueryString = """
            INSERT INTO verifications (\(unsafeRaw: VerificationRecord.columns))
            VALUES (\(bind: candidate.id), \(bind: candidate.projectId), \(bind: candidate.channel.rawValue),
                    \(bind: candidate.destination), \(bind: candidate.destinationKey), \(bind: candidate.locale),
                    'pending', \(bind: candidate.codeSalt), \(bind: candidate.codeLength), 1, 0,
                    \(bind: now.storedValue), \(bind: now.storedValue), \(bind: candidate.expiresAt.storedValue),
                    \(bind: candidate.purpose.rawValue), \(bind: try candidate.sessionClaims.map(storedJSON)),
                    \(bind: candidate.startedBy?.rawValue), \(bind: candidate.appProof?.rawValue))
            ON CONFLICT (project_id, purpose, destination_key) WHERE status = 'pending' DO NOTHING
            RETURNING \(unsafeRaw: VerificationRecord.columns)
            """
        guard let messageId, engine == .postgres else {
            guard let row = try await sql.raw(insert).first() else { return nil }
            let record = try VerificationRecord(row: row)
            if let messageId { try await enqueue(sql, messageId: messageId, for: record, now: now) }
            return record
        }
        return try await sql.raw(
            """
            WITH inserted AS (\(insert)),
            queued AS (
                INSERT INTO outbox (id, project_id, channel, destination, verification_id, locale, status, attempts,
                                    next_attempt_at, created_at)
                SELECT \(bind: messageId), project_id, channel, destination, id, locale, 'pending', 0,
                       \(bind: now.storedValue), \(bind: now.storedValue)
                FROM inserted
                RETURNING id)
            SELECT \(unsafeRaw: VerificationRecord.columns) FROM inserted
            """
        ).first().map(VerificationRecord.init(row:))
    }

    private static func enqueue(_ sql: any SQLDatabase, messageId: String, for record: VerificationRecord, now: Date)
        async throws
    {
        try await sql.raw(
            """
            INSERT INTO outbox (id, project_id, channel, destination, verification_id, locale, status, attempts,
                                next_attempt_at, created_at)
            VALUES (\(bind: messageId), \(bind: record.projectId), \(bind: record.channel.rawValue),
                    \(bind: record.destination), \(bind: record.id), \(bind: record.locale), 'pending', 0,
                    \(bind: now.storedValue), \(bind: now.storedValue))
            """
        ).run()
    }

    func verification(id: String, projectId: String) async throws -> VerificationRecord? {
        try await database.lookupConfirmingMiss { sql in try await verification(in: sql, id: id, projectId: projectId) }
    }

    /// A verification by id alone, for links that carry it (an instant link names its flow and project).
    func verification(id: String) async throws -> VerificationRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications WHERE id = \(bind: id)"
            )
            .first().map(VerificationRecord.init(row:))
        }
    }

    private func verification(in sql: any SQLDatabase, id: String, projectId: String) async throws
        -> VerificationRecord?
    {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications
            WHERE id = \(bind: id) AND project_id = \(bind: projectId)
            """
        ).first().map(VerificationRecord.init(row:))
    }

    /// The messages that carried a verification's code, oldest first: one per send, with the channel it went by.
    func sends(verificationId: String) async throws -> [(messageId: String, at: Date, channel: Channel?)] {
        try await database.execute { sql in
            try await sql.raw(
                """
                SELECT id, created_at, channel FROM outbox WHERE verification_id = \(bind: verificationId)
                ORDER BY created_at, id
                """
            ).all().map { row in
                (
                    try row.decode(column: "id", as: String.self), try row.date("created_at"),
                    Channel(rawValue: try row.decode(column: "channel", as: String.self))
                )
            }
        }
    }

    /// The verification a check by destination refers to: the pending one (which may have just expired), by the
    /// destination's canonical key.
    /// Up to `limit` pending verifications of a purpose in a project, newest first.
    func pendingVerifications(
        purpose: VerificationPurpose, startedBy face: StartingFace, projectId: String, now: Date, limit: Int
    ) async throws -> [VerificationRecord] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications
                WHERE project_id = \(bind: projectId) AND purpose = \(bind: purpose.rawValue) AND status = 'pending'
                  AND started_by = \(bind: face.rawValue) AND expires_at > \(bind: now.storedValue)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(VerificationRecord.init(row:))
        }
    }

    func pendingVerification(destinationKey: String, purpose: VerificationPurpose, projectId: String) async throws
        -> VerificationRecord?
    {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications
                WHERE project_id = \(bind: projectId) AND purpose = \(bind: purpose.rawValue)
                  AND destination_key = \(bind: destinationKey) AND status = 'pending'
                """
            ).first().map(VerificationRecord.init(row:))
        }
    }

    /// The newest pending session-bound code to a destination: a purpose starting with `purposePrefix` (ending in
    /// `:`) and naming the session, as ``VerificationPurpose/stepUp(session:)`` does.
    func pendingSessionBound(destinationKey: String, purposePrefix: String, projectId: String) async throws
        -> VerificationRecord?
    {
        // A range on the purpose instead of LIKE, whose `_` would match any character: ';' follows ':'.
        let upperBound = String(purposePrefix.dropLast()) + ";"
        return try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications
                WHERE project_id = \(bind: projectId) AND destination_key = \(bind: destinationKey)
                  AND purpose >= \(bind: purposePrefix) AND purpose < \(bind: upperBound) AND status = 'pending'
                ORDER BY created_at DESC, id DESC LIMIT 1
                """
            ).first().map(VerificationRecord.init(row:))
        }
    }

    /// The latest verification of `purpose` to `destination` that has not expired, whatever its status.
    ///
    /// A verification starts only once the one before it stopped being pending, so of two created in the same
    /// instant the one out of checks is the older.
    func latestUnexpiredVerification(destinationKey: String, purpose: VerificationPurpose, projectId: String, now: Date)
        async throws -> VerificationRecord?
    {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: VerificationRecord.columns) FROM verifications
                WHERE project_id = \(bind: projectId) AND purpose = \(bind: purpose.rawValue)
                  AND destination_key = \(bind: destinationKey) AND expires_at > \(bind: now.storedValue)
                ORDER BY created_at DESC, CASE WHEN status = 'max_attempts_reached' THEN 1 ELSE 0 END, id DESC
                LIMIT 1
                """
            ).first().map(VerificationRecord.init(row:))
        }
    }

    /// Cancels the pending codes or links of `purpose`, except the one to `keeping` (a destination key): after a
    /// possession flow's number change, nothing sent to the old number may prove the new one.
    func cancelPending(
        purpose: VerificationPurpose, projectId: String, keeping: String?, now: Date, in work: UnitOfWork
    )
        async throws
    {
        try await work.sql.raw(
            """
            UPDATE verifications SET status = 'canceled', updated_at = \(bind: now.storedValue)
            WHERE project_id = \(bind: projectId) AND purpose = \(bind: purpose.rawValue) AND status = 'pending'
              AND destination_key <> \(bind: keeping ?? "")
            """
        ).run()
    }

    /// Runs `body` as one unit of work: an approval and what it proves commit together or not at all.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Approves a verification that is still pending, unexpired and under the attempt limit, in the caller's unit of
    /// work when one is given. Returns nil when another request got there first or the verification stopped being
    /// checkable.
    func approve(id: String, maxChecks: Int, now: Date, in work: UnitOfWork? = nil) async throws
        -> VerificationRecord?
    {
        try await changeCheckable(id: id, maxChecks: maxChecks, now: now, set: "status = 'approved'", in: work)
    }

    /// Counts one wrong code. The last allowed attempt moves the verification to `max_attempts_reached`.
    /// Returns nil when the verification is no longer checkable (approved, expired, already at the limit).
    func recordWrongCode(id: String, maxChecks: Int, now: Date) async throws -> VerificationRecord? {
        try await changeCheckable(
            id: id, maxChecks: maxChecks, now: now,
            set: """
                check_attempts = check_attempts + 1,
                status = CASE WHEN check_attempts + 1 >= \(bind: maxChecks) THEN 'max_attempts_reached' ELSE status END
                """)
    }

    /// Applies `set` to a verification that is still checkable: pending, unexpired and under the attempt limit.
    /// Returns the changed verification, or nil when it was not checkable.
    private func changeCheckable(
        id: String, maxChecks: Int, now: Date, set: SQLQueryString, in work: UnitOfWork? = nil
    ) async throws -> VerificationRecord? {
        try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                UPDATE verifications SET \(set), updated_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND status = 'pending' AND expires_at > \(bind: now.storedValue)
                  AND check_attempts < \(bind: maxChecks)
                RETURNING \(unsafeRaw: VerificationRecord.columns)
                """
            ).first().map(VerificationRecord.init(row:))
        }
    }

    /// Cancels a pending verification; nil when there is none to cancel.
    func cancel(id: String, projectId: String, now: Date) async throws -> VerificationRecord? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE verifications SET status = 'canceled', updated_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND status = 'pending'
                  AND expires_at > \(bind: now.storedValue)
                RETURNING \(unsafeRaw: VerificationRecord.columns)
                """
            ).first().map(VerificationRecord.init(row:))
        }
    }
}
