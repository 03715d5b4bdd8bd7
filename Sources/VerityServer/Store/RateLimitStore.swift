import Foundation
import SQLKit

/// Token buckets kept in the database, so every node shares them.
struct RateLimitStore: Sendable {
    let database: Database

    /// Refills the bucket for the time passed and takes one token if there is one, in one statement.
    /// Returns whether a token was taken and how many are left. With `transaction`, the statement runs in it (and
    /// rolls back with it).
    func take(
        bucket: String, capacity: Double, refillPerSecond: Double, now: Date, in work: UnitOfWork? = nil
    ) async throws -> (allowed: Bool, tokens: Double) {
        // The refilled level, bound rather than written into the text, so that every take is the same statement
        // (prepared once) whatever the clock says.
        let elapsed: SQLQueryString = "(\(bind: now.storedValue) - rate_buckets.updated_at)"
        let level: SQLQueryString = "rate_buckets.tokens + \(elapsed) * \(bind: refillPerSecond)"
        let refilled: SQLQueryString = "\(unsafeRaw: database.leastFunction)(\(bind: capacity), \(level))"
        return try await database.execute(in: work) { sql in
            try await sql.raw(
                """
                INSERT INTO rate_buckets (bucket, tokens, allowed, updated_at)
                VALUES (\(bind: bucket), \(bind: capacity - 1), 1, \(bind: now.storedValue))
                ON CONFLICT (bucket) DO UPDATE SET
                    tokens = CASE WHEN \(refilled) >= 1 THEN \(refilled) - 1 ELSE \(refilled) END,
                    allowed = CASE WHEN \(refilled) >= 1 THEN 1 ELSE 0 END,
                    updated_at = \(bind: now.storedValue)
                RETURNING tokens, allowed
                """
            ).first().map { row in
                (
                    try row.decode(column: "allowed", as: Int.self) == 1,
                    try row.decode(column: "tokens", as: Double.self)
                )
            } ?? (false, 0)
        }
    }
}
