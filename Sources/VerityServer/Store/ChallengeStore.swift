import Foundation
import SQLKit
import VerityCore

/// Challenges, the push notifications that announce them and the webhook events that report them.
struct ChallengeStore: Sendable {
    let database: Database

    private static let table = RecordTable(
        name: "challenges", columns: ChallengeRecord.columns, key: "id", scope: "project_id",
        record: ChallengeRecord.init(row:))

    /// Queues events about an answered challenge inside the answer's transaction.
    typealias AnswerEvents = @Sendable (ChallengeRecord, UnitOfWork) async throws -> Void

    /// Stores a push challenge and queues its notifications (a TOTP challenge, answered on creation, goes through
    /// ``insertAnswered(_:now:webhook:events:)``).
    ///
    /// On PostgreSQL one statement: the challenge's insert chained before its messages' (a statement commits whole).
    /// SQLite runs them as one transaction (one job on its connection).
    func insert(_ challenge: ChallengeRecord, messages: [QueuedMessage], now: Date) async throws {
        guard database.engine == .postgres, !messages.isEmpty else {
            return try await database.transaction { sql in
                try await insert(challenge, in: sql)
                try await QueuedMessage.enqueue(messages, projectId: challenge.projectId, in: sql, now: now)
            }
        }
        let statement: SQLQueryString = """
            WITH challenge AS (\(try Self.insertion(challenge)))
            \(QueuedMessage.insertion(messages, projectId: challenge.projectId, now: now))
            """
        try await database.execute { sql in try await sql.raw(statement).run() }
    }

    private func insert(_ challenge: ChallengeRecord, in sql: any SQLDatabase) async throws {
        try await sql.raw(try Self.insertion(challenge)).run()
    }

    private static func insertion(_ challenge: ChallengeRecord) throws -> SQLQueryString {
        """
        INSERT INTO challenges (\(unsafeRaw: ChallengeRecord.columns))
        VALUES (\(bind: challenge.id), \(bind: challenge.projectId), \(bind: challenge.userId),
                \(bind: challenge.factorId), \(bind: challenge.type.rawValue), \(bind: challenge.status.rawValue),
                \(bind: challenge.message), \(bind: try Self.json(challenge.details)),
                \(bind: try Self.json(challenge.hiddenDetails)), \(bind: challenge.contentHash),
                \(bind: challenge.userVerification.rawValue), \(bind: challenge.createdAt.storedValue),
                \(bind: challenge.expiresAt.storedValue), \(bind: challenge.respondedAt?.storedValue),
                \(bind: challenge.respondedFactorId), \(bind: try challenge.context.map(Self.json)),
                \(bind: challenge.answer.keyType?.rawValue), \(bind: try challenge.answer.amr.map(Self.json)),
                \(bind: challenge.answer.reason?.rawValue),
                \(bind: challenge.answer.userVerificationResult?.rawValue))
        """
    }

    func challenge(id: String, projectId: String) async throws -> ChallengeRecord? {
        try await database.lookup { try await Self.table.find(id, in: projectId, on: $0) }
    }

    /// A factor by id (as the factors' own store reads it) and the challenge `challengeId` of its project, if there
    /// is one: what a device's answer needs, in one joined read of the two tables.
    func factorWithChallenge(factorId: String, challengeId: String) async throws -> (FactorRecord, ChallengeRecord?)? {
        try await database.lookup { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT \(unsafeRaw: qualified(FactorRecord.columns, by: "f")), \(unsafeRaw: prefixed(ChallengeRecord.columns, by: "c"))
                    FROM factors f LEFT JOIN challenges c ON c.id = \(bind: challengeId) AND c.project_id = f.project_id
                    WHERE f.id = \(bind: factorId)
                    """
                ).first()
            else { return nil }
            let challenge = PrefixedRow(row, alias: "c")
            return (
                try FactorRecord(row: row),
                try challenge.decode(column: "id", as: String?.self) == nil ? nil : try ChallengeRecord(row: challenge)
            )
        }
    }

    /// Up to `limit` of the pending, unexpired push challenges a factor may answer (those sent to it, and those sent
    /// to its user), newest first, after the challenge `after` (the last of the previous page).
    func pendingChallenges(for factor: FactorRecord, now: Date, after: String?, limit: Int) async throws
        -> [ChallengeRecord]
    {
        try await database.lookup { sql in
            try await Self.table.page(
                in: factor.projectId,
                filter: """
                    AND user_id = \(bind: factor.userId) AND status = 'pending' AND expires_at > \(bind: now.storedValue)
                    AND type = 'push' AND (factor_id IS NULL OR factor_id = \(bind: factor.id))
                    """,
                after: after, limit: limit, newestFirst: true, on: sql)
        }
    }

    /// Up to `limit` of a project's push challenges, newest first, after the challenge `after`; only those in
    /// `status` and sent to `factorId` (or to the factor's whole user, when it was sent to none) when given.
    func page(projectId: String, status: ChallengeStatus?, factorId: String?, after: String?, limit: Int)
        async throws -> [ChallengeRecord]
    {
        try await database.lookup { sql in
            let state: SQLQueryString = status.map { "AND status = \(bind: $0.rawValue)" } ?? ""
            let factor: SQLQueryString =
                factorId.map { "AND (factor_id = \(bind: $0) OR responded_factor_id = \(bind: $0))" } ?? ""
            return try await Self.table.page(
                in: projectId, filter: "AND type = 'push' \(state) \(factor)", after: after, limit: limit,
                newestFirst: true, on: sql)
        }
    }

    /// What recording an answer did.
    enum AnswerOutcome: Sendable {
        /// The answer is recorded (its webhook and events queued, its device token spent).
        case answered(ChallengeRecord)
        /// The challenge was not pending any more, or had expired: nothing is recorded but the device token's use.
        /// `current` is the challenge as it stood (nil if it is gone).
        case refused(current: ChallengeRecord?)
        /// The device token had been spent before: nothing is written.
        case tokenSpent
    }

    /// Records the first answer to a pending, unexpired challenge, queuing its webhook in the same transaction, and
    /// spends the device token it came with whether or not the answer is recorded.
    ///
    /// On PostgreSQL an answer with nothing more to queue (no webhook, no `events`) is one statement of chained writes:
    /// the token's `jti`, the challenge and the look-up of the project's webhook together. When the project has a
    /// webhook that statement changes nothing and the answer runs as a transaction instead, with the same statement
    /// first and then the outbox insert. SQLite runs every answer as one transaction (one job on its connection).
    /// - Parameter token: The device token's use, spent with the answer (nil for a protocol whose tokens are not
    ///   single-use).
    /// - Parameter events: Queues more events about the answer in the same transaction (a reported deny reason, the
    ///   Twilio face's webhooks).
    /// - Parameter statement: What the signed answer states (key, verification, reason), kept with it.
    func answer(
        id: String, status: ChallengeStatus, factorId: String, now: Date,
        statement: ChallengeRecord.AnswerStatement = .init(), spending token: FactorService.DeviceTokenUse? = nil,
        webhook: @Sendable (ChallengeRecord, _ url: String) throws -> QueuedMessage,
        events: AnswerEvents? = nil
    ) async throws -> AnswerOutcome {
        let change = Change(
            id: id, status: status, factorId: factorId, now: now, statement: statement,
            amr: try statement.amr.map(Self.json), token: token)
        guard database.engine == .postgres else {
            return try await database.transaction { sql in
                try await Self.answerInSteps(change, webhook: webhook, events: events, in: sql)
            }
        }
        if events == nil, token != nil {
            let row = try await database.execute { sql in
                try await sql.raw(Self.chainedAnswer(change, unlessWebhook: true)).first()
            }
            if let row, try row.decode(column: "proceeded", as: Int.self) > 0 {
                return try Self.outcome(of: row)
            }
        }
        return try await database.transaction { sql in
            guard let row = try await sql.raw(Self.chainedAnswer(change, unlessWebhook: false)).first() else {
                return .refused(current: nil)
            }
            let outcome = try Self.outcome(of: row)
            guard case .answered(let answered) = outcome else { return outcome }
            if let url = try row.decode(column: "webhook_url", as: String?.self),
                try row.decode(column: "webhook_secret", as: String?.self) != nil
            {
                try await QueuedMessage.enqueue(
                    [try webhook(answered, url)], projectId: answered.projectId, in: sql, now: now)
            }
            try await events?(answered, UnitOfWork(sql: sql))
            return outcome
        }
    }

    /// An answer as ``answer(id:status:factorId:now:statement:spending:webhook:events:)`` records it.
    private struct Change: Sendable {
        var id: String
        var status: ChallengeStatus
        var factorId: String
        var now: Date
        var statement: ChallengeRecord.AnswerStatement
        /// `statement.amr` as stored.
        var amr: String?
        var token: FactorService.DeviceTokenUse?
    }

    /// An answer statement by statement, in the caller's transaction: the token's use first (a replay writes
    /// nothing), then the conditional update, the webhook and the events.
    private static func answerInSteps(
        _ change: Change, webhook: (ChallengeRecord, String) throws -> QueuedMessage, events: AnswerEvents?,
        in sql: any SQLDatabase
    ) async throws -> AnswerOutcome {
        if let token = change.token {
            guard
                try await token.spend(in: sql)
            else { return .tokenSpent }
        }
        guard
            let row = try await sql.raw(
                """
                UPDATE challenges SET \(answerAssignments(change))
                WHERE id = \(bind: change.id) AND status = 'pending' AND expires_at > \(bind: change.now.storedValue)
                RETURNING \(unsafeRaw: ChallengeRecord.columns)
                """
            ).first()
        else {
            let current = try await sql.raw(
                "SELECT \(unsafeRaw: ChallengeRecord.columns) FROM challenges WHERE id = \(bind: change.id)"
            )
            .first().map(ChallengeRecord.init(row:))
            return .refused(current: current)
        }
        let answered = try ChallengeRecord(row: row)
        try await Self.enqueueWebhook(for: answered, webhook: webhook, in: sql, now: change.now)
        try await events?(answered, UnitOfWork(sql: sql))
        return .answered(answered)
    }

    private static func answerAssignments(_ change: Change) -> SQLQueryString {
        """
        status = \(bind: change.status.rawValue), responded_at = \(bind: change.now.storedValue),
            responded_factor_id = \(bind: change.factorId),
            response_key_type = \(bind: change.statement.keyType?.rawValue), response_amr = \(bind: change.amr),
            deny_reason = \(bind: change.statement.reason?.rawValue),
            user_verification_result = \(bind: change.statement.userVerificationResult?.rawValue)
        """
    }

    /// An answer in one PostgreSQL statement: spends the token (`spent`), records the answer only if it did
    /// (`answered`), and reads the project's webhook and the challenge as it stood before (`stood`, for a refusal).
    /// With `unlessWebhook`, none of it happens when the project has a webhook (`proceeded` is then 0), since the
    /// webhook's event is made from the answered row and must commit with it. The statements of one `WITH` see the
    /// same snapshot, so the update's `EXISTS (… spent)` is what orders it after the token's use; a concurrent answer
    /// to the same challenge makes this update wait for it and then find the row no longer pending.
    private static func chainedAnswer(_ change: Change, unlessWebhook: Bool) -> SQLQueryString {
        let proceed: SQLQueryString =
            unlessWebhook
            ? "SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM hook WHERE webhook_url IS NOT NULL AND webhook_secret IS NOT NULL)"
            : "SELECT 1"
        let spend: SQLQueryString =
            if let token = change.token {
                """
                INSERT INTO device_token_uses (factor_id, jti, expires_at)
                    SELECT \(bind: token.factorId), \(bind: token.jti), \(bind: token.expiresAt.storedValue) FROM proceed
                    ON CONFLICT (factor_id, jti) DO NOTHING
                    RETURNING jti
                """
            } else {
                "SELECT 1 FROM proceed"
            }
        return """
            WITH hook AS (
                SELECT p.webhook_url, p.webhook_secret FROM projects p
                WHERE p.id = (SELECT project_id FROM challenges WHERE id = \(bind: change.id))),
            proceed AS (\(proceed)),
            spent AS (\(spend)),
            answered AS (
                UPDATE challenges SET \(answerAssignments(change))
                WHERE id = \(bind: change.id) AND status = 'pending' AND expires_at > \(bind: change.now.storedValue)
                  AND EXISTS (SELECT 1 FROM spent)
                RETURNING \(unsafeRaw: ChallengeRecord.columns))
            SELECT (SELECT count(*) FROM proceed) AS proceeded, (SELECT count(*) FROM spent) AS spent_count,
                   (SELECT webhook_url FROM hook) AS webhook_url, (SELECT webhook_secret FROM hook) AS webhook_secret,
                   answered.*, \(unsafeRaw: prefixed(ChallengeRecord.columns, by: "stood"))
            FROM (SELECT 1) AS one LEFT JOIN answered ON true
                LEFT JOIN challenges stood ON stood.id = \(bind: change.id)
            """
    }

    /// What ``chainedAnswer(_:unlessWebhook:)`` did, from the row it returned.
    private static func outcome(of row: any SQLRow) throws -> AnswerOutcome {
        guard try row.decode(column: "spent_count", as: Int.self) > 0 else { return .tokenSpent }
        guard try row.decode(column: "id", as: String?.self) != nil else {
            let stood = PrefixedRow(row, alias: "stood")
            return .refused(
                current: try stood.decode(column: "id", as: String?.self) == nil ? nil : try ChallengeRecord(row: stood)
            )
        }
        return .answered(try ChallengeRecord(row: row))
    }

    /// Spends an approval on what it approved: marks an approved, unexpired, unused challenge as used. Returns false
    /// when it was used already or has expired (one conditional update, so two concurrent uses cannot both win).
    func consumeApproval(id: String, projectId: String, now: Date) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE challenges SET consumed_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND status = 'approved'
                  AND consumed_at IS NULL AND expires_at > \(bind: now.storedValue)
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Marks every pending challenge past its expiry as expired, queuing their webhooks. Returns them.
    func expireDue(
        now: Date, limit: Int = 500, webhook: @Sendable (ChallengeRecord, _ url: String) throws -> QueuedMessage
    ) async throws -> [ChallengeRecord] {
        try await database.transaction { sql in
            let expired = try await sql.raw(
                """
                UPDATE challenges SET status = 'expired'
                WHERE id IN (
                    SELECT id FROM challenges WHERE status = 'pending' AND expires_at <= \(bind: now.storedValue)
                    ORDER BY expires_at LIMIT \(bind: limit) \(unsafeRaw: database.skipLockedClause))
                RETURNING \(unsafeRaw: ChallengeRecord.columns)
                """
            ).all().map(ChallengeRecord.init(row:))
            for challenge in expired {
                try await Self.enqueueWebhook(for: challenge, webhook: webhook, in: sql, now: now)
            }
            return expired
        }
    }

    /// Queues the event for the project's webhook endpoint, when the project has one.
    private static func enqueueWebhook(
        for challenge: ChallengeRecord, webhook: (ChallengeRecord, String) throws -> QueuedMessage,
        in sql: any SQLDatabase, now: Date
    ) async throws {
        guard
            let project = try await sql.raw(
                "SELECT webhook_url, webhook_secret FROM projects WHERE id = \(bind: challenge.projectId)"
            ).first(),
            let url = try project.decode(column: "webhook_url", as: String?.self),
            try project.decode(column: "webhook_secret", as: String?.self) != nil
        else { return }
        try await QueuedMessage.enqueue(
            [try webhook(challenge, url)], projectId: challenge.projectId, in: sql, now: now)
    }

    /// ``enqueueWebhook(for:webhook:in:now:)`` as part of a caller's unit of work (an answer's events).
    func enqueueWebhook(
        for challenge: ChallengeRecord, webhook: (ChallengeRecord, String) throws -> QueuedMessage,
        in work: UnitOfWork, now: Date
    ) async throws {
        try await Self.enqueueWebhook(for: challenge, webhook: webhook, in: work.sql, now: now)
    }

    /// Queues messages about an existing challenge (a push sent again).
    func queue(_ messages: [QueuedMessage], projectId: String, now: Date) async throws {
        try await database.transaction { sql in
            try await QueuedMessage.enqueue(messages, projectId: projectId, in: sql, now: now)
        }
    }

    /// Stores a challenge answered on creation (TOTP) and queues its webhook, and the caller's `events`, as
    /// ``answer(id:status:factorId:now:webhook:events:)`` does for a later answer.
    func insertAnswered(
        _ challenge: ChallengeRecord, now: Date,
        webhook: @Sendable (ChallengeRecord, _ url: String) throws -> QueuedMessage, events: AnswerEvents? = nil
    ) async throws {
        try await database.transaction { sql in
            try await insert(challenge, in: sql)
            try await Self.enqueueWebhook(for: challenge, webhook: webhook, in: sql, now: now)
            try await events?(challenge, UnitOfWork(sql: sql))
        }
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
