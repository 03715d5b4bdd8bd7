import Foundation
import SQLKit
import VerityCore

/// Challenges, the push notifications that announce them and the webhook events that report them.
struct ChallengeStore: Sendable {
    let database: Database

    static let columns = """
        id, project_id, user_id, factor_id, type, status, message, details, hidden_details, content_hash, \
        user_verification, created_at, expires_at, responded_at, responded_factor_id, context, response_key_type, \
        response_amr, deny_reason, user_verification_result
        """

    /// Queues events about an answered challenge inside the answer's transaction.
    typealias AnswerEvents = @Sendable (ChallengeRecord, UnitOfWork) async throws -> Void

    /// A message to queue with a challenge change, in the same transaction.
    struct QueuedMessage: Sendable {
        var id: String
        var channel: OutboxChannel
        /// The factor id for a push, the URL for a webhook.
        var destination: String
        var payload: String
    }

    /// Stores a challenge and queues its push notifications (and, for an immediate TOTP answer, its webhook).
    func insert(_ challenge: ChallengeRecord, messages: [QueuedMessage], now: Date) async throws {
        try await database.transaction { sql in
            try await insert(challenge, in: sql)
            try await Self.enqueue(messages, projectId: challenge.projectId, in: sql, now: now)
        }
    }

    private func insert(_ challenge: ChallengeRecord, in sql: any SQLDatabase) async throws {
        try await sql.raw(
            """
            INSERT INTO challenges (\(unsafeRaw: Self.columns))
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
        ).run()
    }

    func challenge(id: String, projectId: String) async throws -> ChallengeRecord? {
        try await database.lookup { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM challenges WHERE id = \(bind: id) AND project_id = \(bind: projectId)"
            ).first().map(Self.record(from:))
        }
    }

    /// Up to `limit` of the pending, unexpired push challenges a factor may answer (those sent to it, and those sent
    /// to its user), newest first, after the challenge `after` (the last of the previous page).
    func pendingChallenges(for factor: FactorRecord, now: Date, after: String?, limit: Int) async throws
        -> [ChallengeRecord]
    {
        try await database.lookup { sql in
            let start = SQLQueryString.pageStart(
                after: after, table: "challenges", key: "id", scope: "project_id", factor.projectId, newestFirst: true)
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM challenges
                WHERE project_id = \(bind: factor.projectId) AND user_id = \(bind: factor.userId)
                  AND status = 'pending' AND expires_at > \(bind: now.storedValue) AND type = 'push'
                  AND (factor_id IS NULL OR factor_id = \(bind: factor.id)) \(start)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(Self.record(from:))
        }
    }

    /// Up to `limit` of a project's push challenges, newest first, after the challenge `after`; only those in
    /// `status` and sent to `factorId` (or to the factor's whole user, when it was sent to none) when given.
    func page(projectId: String, status: ChallengeStatus?, factorId: String?, after: String?, limit: Int)
        async throws -> [ChallengeRecord]
    {
        try await database.lookup { sql in
            let start = SQLQueryString.pageStart(
                after: after, table: "challenges", key: "id", scope: "project_id", projectId, newestFirst: true)
            let state: SQLQueryString = status.map { "AND status = \(bind: $0.rawValue)" } ?? ""
            let factor: SQLQueryString =
                factorId.map { "AND (factor_id = \(bind: $0) OR responded_factor_id = \(bind: $0))" } ?? ""
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM challenges
                WHERE project_id = \(bind: projectId) AND type = 'push' \(state) \(factor) \(start)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(Self.record(from:))
        }
    }

    /// Records the first answer to a pending, unexpired challenge, queuing its webhook in the same transaction.
    /// Returns nil when it was already answered or has expired.
    /// - Parameter events: Queues more events about the answer in the same transaction (the Twilio face's).
    /// - Parameter statement: What the signed answer states (key, verification, reason), kept with it.
    func answer(
        id: String, status: ChallengeStatus, factorId: String, now: Date,
        statement: ChallengeRecord.AnswerStatement = .init(),
        webhook: @Sendable (ChallengeRecord, _ url: String) throws -> QueuedMessage,
        events: AnswerEvents? = nil
    ) async throws -> ChallengeRecord? {
        let amr = try statement.amr.map(Self.json)
        return try await database.transaction { sql in
            guard
                let row = try await sql.raw(
                    """
                    UPDATE challenges SET status = \(bind: status.rawValue), responded_at = \(bind: now.storedValue),
                        responded_factor_id = \(bind: factorId), response_key_type = \(bind: statement.keyType?.rawValue),
                        response_amr = \(bind: amr), deny_reason = \(bind: statement.reason?.rawValue),
                        user_verification_result = \(bind: statement.userVerificationResult?.rawValue)
                    WHERE id = \(bind: id) AND status = 'pending' AND expires_at > \(bind: now.storedValue)
                    RETURNING \(unsafeRaw: Self.columns)
                    """
                ).first()
            else { return nil }
            let answered = try Self.record(from: row)
            try await Self.enqueueWebhook(for: answered, webhook: webhook, in: sql, now: now)
            try await events?(answered, UnitOfWork(sql: sql))
            return answered
        }
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
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).all().map(Self.record(from:))
            for challenge in expired {
                try await Self.enqueueWebhook(for: challenge, webhook: webhook, in: sql, now: now)
            }
            return expired
        }
    }

    /// Queues the event for the project's webhook endpoint, when the project has one.
    static func enqueueWebhook(
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
        try await enqueue([try webhook(challenge, url)], projectId: challenge.projectId, in: sql, now: now)
    }

    /// ``enqueueWebhook(for:webhook:in:now:)`` as part of a caller's unit of work (an answer's events).
    static func enqueueWebhook(
        for challenge: ChallengeRecord, webhook: (ChallengeRecord, String) throws -> QueuedMessage,
        in work: UnitOfWork, now: Date
    ) async throws {
        try await enqueueWebhook(for: challenge, webhook: webhook, in: work.sql, now: now)
    }

    /// Queues messages about an existing challenge (a push sent again).
    func queue(_ messages: [QueuedMessage], projectId: String, now: Date) async throws {
        try await database.transaction { sql in
            try await Self.enqueue(messages, projectId: projectId, in: sql, now: now)
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

    static func enqueue(_ messages: [QueuedMessage], projectId: String, in sql: any SQLDatabase, now: Date)
        async throws
    {
        for message in messages {
            try await sql.raw(
                """
                INSERT INTO outbox (id, project_id, channel, destination, locale, status, attempts, next_attempt_at,
                                    created_at, payload)
                VALUES (\(bind: message.id), \(bind: projectId), \(bind: message.channel.rawValue),
                        \(bind: message.destination), 'en', 'pending', 0, \(bind: now.storedValue),
                        \(bind: now.storedValue), \(bind: message.payload))
                """
            ).run()
        }
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func record(from row: any SQLRow) throws -> ChallengeRecord {
        let decoder = JSONDecoder()
        return ChallengeRecord(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            factorId: try row.decode(column: "factor_id", as: String?.self),
            type: try row.enumeration("type", as: FactorType.self),
            status: try row.enumeration("status", as: ChallengeStatus.self),
            message: try row.decode(column: "message", as: String.self),
            details: try decoder.decode(
                [ChallengeDetail].self, from: Data(try row.decode(column: "details", as: String.self).utf8)),
            hiddenDetails: try decoder.decode(
                [String: String].self, from: Data(try row.decode(column: "hidden_details", as: String.self).utf8)),
            contentHash: try row.decode(column: "content_hash", as: String.self),
            userVerification: try row.enumeration("user_verification", as: UserVerification.self),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            respondedAt: try row.optionalDate("responded_at"),
            respondedFactorId: try row.decode(column: "responded_factor_id", as: String?.self),
            context: try row.json("context", as: ChallengeContext.self),
            answer: ChallengeRecord.AnswerStatement(
                keyType: try row.decode(column: "response_key_type", as: String?.self).flatMap(
                    FactorKeyType.init(rawValue:)),
                amr: try row.json("response_amr", as: [UserVerificationMethod].self),
                reason: try row.decode(column: "deny_reason", as: String?.self).flatMap(DenyReason.init(rawValue:)),
                userVerificationResult: try row.decode(column: "user_verification_result", as: String?.self).flatMap(
                    UserVerificationResult.init(rawValue:))))
    }
}
