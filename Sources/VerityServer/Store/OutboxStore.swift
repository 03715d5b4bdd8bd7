import Foundation
import SQLKit
import VerityCore

/// The transactional outbox: messages are written with the change that causes them and drained by workers.
struct OutboxStore: Sendable {
    let database: Database
    /// Opens the project's sealed webhook signing secret (as the project's settings seal it).
    let webhookSecrets: SecretSealer

    static let columns = """
        id, project_id, channel, destination, verification_id, locale, payload, status, attempts, next_attempt_at, \
        last_error, sender, created_at, sent_at, provider_message_id
        """

    /// A message with what is needed to render and send it.
    struct Delivery: Sendable {
        var message: OutboxMessage
        var projectName: String
        var verification: VerificationRecord?
        /// The factor a push goes to (its token is read at send time: the device may have sent a new one).
        var factor: FactorRecord?
        /// The project's webhook signing secret, for a webhook event.
        var webhookSecret: String?
        /// The project's fallback channel for codes (see ``ProjectSettings/fallbackChannel``).
        var fallbackChannel: Channel?
        /// The channels the project turned off.
        var disabledChannels: [Channel] = []
    }

    /// Claims up to `limit` due messages for this worker, at most `perProject` of one project's and none of
    /// `excludingProjects`'.
    ///
    /// Claiming pushes `next_attempt_at` forward by `lease` and counts the attempt in the same statement, so a
    /// message is taken by one worker at a time (on PostgreSQL, `SKIP LOCKED` lets other nodes take the next
    /// ones) and a worker that dies mid-send leaves it to be retried once the lease runs out.
    func claimDue(
        channels: [OutboxChannel], limit: Int, perProject: Int? = nil, excludingProjects: Set<String> = [],
        lease: TimeInterval, now: Date
    ) async throws -> [OutboxMessage] {
        let kinds = SQLList(channels.map { SQLBind($0.rawValue) })
        // `NOT IN ()` is not SQL: with no project to leave out, there is no condition.
        let notExcluded: SQLQueryString =
            excludingProjects.isEmpty
            ? "" : " AND project_id NOT IN (\(SQLList(excludingProjects.sorted().map { SQLBind($0) })))"

        let leaseEnd = now.addingTimeInterval(lease).storedValue
        return try await database.transaction { sql in
            guard let perProject else {
                return try await sql.raw(
                    """
                    UPDATE outbox SET attempts = attempts + 1, next_attempt_at = \(bind: leaseEnd)
                    WHERE id IN (
                        SELECT id FROM outbox
                        WHERE status = 'pending' AND next_attempt_at <= \(bind: now.storedValue) AND channel IN (\(kinds))\(notExcluded)
                        ORDER BY next_attempt_at, id LIMIT \(bind: limit) \(unsafeRaw: database.skipLockedClause))
                    RETURNING \(unsafeRaw: Self.columns)
                    """
                ).all().map(Self.message(from:))
            }
            // At most `perProject` of one project's: a window function, which `SKIP LOCKED` cannot go with, so the
            // outer update checks the row again (on PostgreSQL after waiting for a concurrent claim's lock, which
            // then has moved `next_attempt_at` on) and two nodes never claim one message.
            return try await sql.raw(
                """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = \(bind: leaseEnd)
                WHERE status = 'pending' AND next_attempt_at <= \(bind: now.storedValue) AND id IN (
                    SELECT id FROM (
                        SELECT id, next_attempt_at AS due,
                            ROW_NUMBER() OVER (PARTITION BY project_id ORDER BY next_attempt_at, id) AS place
                        FROM outbox
                        WHERE status = 'pending' AND next_attempt_at <= \(bind: now.storedValue) AND channel IN (\(kinds))\(notExcluded)
                    ) ranked
                    WHERE place <= \(bind: perProject) ORDER BY due, id LIMIT \(bind: limit))
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).all().map(Self.message(from:))
        }
    }

    /// Records a delivery the provider accepted, with its id for the message when it gave one.
    func markSent(id: String, sender: String, providerMessageId: String? = nil, now: Date) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE outbox SET status = 'sent', sender = \(bind: sender), sent_at = \(bind: now.storedValue),
                    last_error = NULL, provider_message_id = \(bind: providerMessageId)
                WHERE id = \(bind: id)
                """
            ).run()
        }
    }

    /// The sent code message (SMS, email, call or WhatsApp) a provider knows as `providerMessageId`, if it is still
    /// counted as sent: a message already given up is not given up twice.
    func sentCodeMessage(providerMessageId: String) async throws -> OutboxMessage? {
        let codeChannels = SQLList(OutboxChannel.allCases.filter { $0.codeChannel != nil }.map { SQLBind($0.rawValue) })
        return try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM outbox
                WHERE provider_message_id = \(bind: providerMessageId) AND status = 'sent'
                  AND channel IN (\(codeChannels))
                """
            ).first().map(Self.message(from:))
        }
    }

    /// Gives a message up for good (`dead`) with `reason`, unless it was given up already (a provider reporting the
    /// same failure twice); returns whether this call gave it up.
    func giveUp(id: String, reason: String) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE outbox SET status = 'dead', last_error = \(bind: reason)
                WHERE id = \(bind: id) AND status <> 'dead'
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Records a failed attempt: retry at `retryAt`, or give up (`dead`) when `retryAt` is nil.
    func markFailed(id: String, reason: String, retryAt: Date?) async throws {
        try await database.execute { sql in
            if let retryAt {
                try await sql.raw(
                    """
                    UPDATE outbox SET last_error = \(bind: reason), next_attempt_at = \(bind: retryAt.storedValue)
                    WHERE id = \(bind: id)
                    """
                ).run()
            } else {
                try await sql.raw(
                    "UPDATE outbox SET status = 'dead', last_error = \(bind: reason) WHERE id = \(bind: id)"
                ).run()
            }
        }
    }

    /// Loads what rendering a message needs: the project's name and, for a code, its verification; for a push, the
    /// factor it goes to. One joined read of the other aggregates' tables (projects, verifications, factors), so the
    /// outbox calls no other store.
    func delivery(for message: OutboxMessage) async throws -> Delivery? {
        let factorId = message.channel == .push ? message.destination : nil
        return try await database.lookup { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT p.name, p.webhook_secret, p.fallback_channel, p.disabled_channels,
                           \(unsafeRaw: prefixed(VerificationRecord.columns, by: "v")),
                           \(unsafeRaw: prefixed(FactorRecord.columns, by: "f"))
                    FROM projects p
                    LEFT JOIN verifications v ON v.id = \(bind: message.verificationId) AND v.project_id = p.id
                    LEFT JOIN factors f ON f.id = \(bind: factorId)
                    WHERE p.id = \(bind: message.projectId)
                    """
                ).first()
            else { return nil }
            let verification = PrefixedRow(row, alias: "v")
            let factor = PrefixedRow(row, alias: "f")
            return Delivery(
                message: message, projectName: try row.decode(column: "name", as: String.self),
                verification: try verification.decodeNil(column: "id")
                    ? nil : try VerificationRecord(row: verification),
                factor: try factor.decodeNil(column: "id") ? nil : try FactorRecord(row: factor),
                webhookSecret: try row.decode(column: "webhook_secret", as: String?.self).map {
                    try webhookSecrets.openText($0, context: message.projectId)
                },
                fallbackChannel: try row.decode(column: "fallback_channel", as: String?.self)
                    .flatMap(Channel.init(rawValue:)),
                disabledChannels: try row.decode(column: "disabled_channels", as: String.self)
                    .split(separator: ",").compactMap { Channel(rawValue: String($0)) })
        }
    }

    /// Messages, newest first, optionally only those to one destination.
    func messages(destination: String?, limit: Int) async throws -> [OutboxMessage] {
        try await database.lookup { sql in
            let filter: SQLQueryString = destination.map { "WHERE destination = \(bind: $0)" } ?? ""
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM outbox \(filter)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(Self.message(from:))
        }
    }

    /// How many messages wait to be sent.
    /// Whether any message of `channels` is due, read on a reader connection: an idle poll takes no write lock.
    func hasDue(channels: [OutboxChannel], now: Date) async throws -> Bool {
        let kinds = SQLList(channels.map { SQLBind($0.rawValue) })
        return try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT 1 AS due FROM outbox
                WHERE status = 'pending' AND next_attempt_at <= \(bind: now.storedValue) AND channel IN (\(kinds))
                LIMIT 1
                """
            ).first() != nil
        }
    }

    func pendingCount() async throws -> Int {
        try await database.lookup { sql in
            try await sql.raw("SELECT COUNT(*) AS depth FROM outbox WHERE status = 'pending'").first()?
                .decode(column: "depth", as: Int.self) ?? 0
        }
    }

    static func message(from row: any SQLRow) throws -> OutboxMessage {
        OutboxMessage(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            channel: try row.enumeration("channel", as: OutboxChannel.self),
            destination: try row.decode(column: "destination", as: String.self),
            verificationId: try row.decode(column: "verification_id", as: String?.self),
            locale: try row.decode(column: "locale", as: String.self),
            payload: try row.decode(column: "payload", as: String?.self),
            status: try row.enumeration("status", as: OutboxMessage.Status.self),
            attempts: try row.decode(column: "attempts", as: Int.self),
            nextAttemptAt: try row.date("next_attempt_at"),
            lastError: try row.decode(column: "last_error", as: String?.self),
            sender: try row.decode(column: "sender", as: String?.self),
            createdAt: try row.date("created_at"), sentAt: try row.optionalDate("sent_at"),
            providerMessageId: try row.decode(column: "provider_message_id", as: String?.self))
    }
}
