import Foundation
import SQLKit

/// How quickly sent messages left the outbox.
struct DeliveryLatency: Sendable, Equatable {
    /// Messages sent.
    var sent: Int
    /// Their mean time from queued to accepted by the provider, in seconds (0 when none was sent).
    var averageSeconds: Double
    /// The slowest, in seconds.
    var maximumSeconds: Double
}

extension OutboxStore {
    private static let table = RecordTable(
        name: "outbox", columns: columns, key: "id", scope: "project_id", record: message(from:))

    /// Up to `limit` messages of every project, newest first, after the one `after` names; only those in `status`
    /// and to `destination` when given.
    func page(status: OutboxMessage.Status?, destination: String?, after: String?, limit: Int) async throws
        -> [OutboxMessage]
    {
        try await database.lookup { sql in
            let state: SQLQueryString = status.map { "AND status = \(bind: $0.rawValue)" } ?? ""
            let to: SQLQueryString = destination.map { "AND destination = \(bind: $0)" } ?? ""
            return try await Self.table.newestOfAll(filter: "\(state) \(to)", after: after, limit: limit, on: sql)
        }
    }

    /// Puts a message that was given up (`dead`) back in the queue, due now, with its attempts counted from zero;
    /// the message, or nil when there is no dead message `id`.
    func retryDead(id: String, now: Date) async throws -> OutboxMessage? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = \(bind: now.storedValue),
                    last_error = NULL
                WHERE id = \(bind: id) AND status = 'dead'
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.message(from:))
        }
    }

    /// How many messages of every project were sent since `since`, and how long they waited.
    func deliveryLatency(since: Date) async throws -> DeliveryLatency {
        try await database.lookup { sql in
            guard
                let row = try await sql.raw(
                    """
                    SELECT COUNT(*) AS n, AVG(sent_at - created_at) AS average, MAX(sent_at - created_at) AS slowest
                    FROM outbox WHERE status = 'sent' AND created_at >= \(bind: since.storedValue)
                    """
                ).first()
            else { return DeliveryLatency(sent: 0, averageSeconds: 0, maximumSeconds: 0) }
            return DeliveryLatency(
                sent: try row.decode(column: "n", as: Int.self),
                averageSeconds: try row.decode(column: "average", as: Double?.self) ?? 0,
                maximumSeconds: try row.decode(column: "slowest", as: Double?.self) ?? 0)
        }
    }
}
