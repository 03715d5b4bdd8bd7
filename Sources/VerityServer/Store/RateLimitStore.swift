import Foundation
import SQLKit

/// Token buckets kept in the database, so every node shares them.
struct RateLimitStore: Sendable {
    let database: Database

    /// Refills the bucket for the time passed and takes one token if there is one, in one statement.
    /// Returns whether a token was taken and how many are left. With `transaction`, the statement runs in it (and
    /// rolls back with it).
    func take(
        bucket: String, capacity: Double, refillPerSecond: Double, now: Date, in transaction: UnitOfWork? = nil
    ) async throws -> (allowed: Bool, tokens: Double) {
        let refilled = database.least(
            "\(capacity)", "rate_buckets.tokens + (\(now.storedValue) - rate_buckets.updated_at) * \(refillPerSecond)")
        return try await database.execute(in: transaction) { sql in
            // The numbers above are the server's own configuration and clock, never client input.
            try await sql.raw(
                """
                INSERT INTO rate_buckets (bucket, tokens, allowed, updated_at)
                VALUES (\(bind: bucket), \(bind: capacity - 1), 1, \(bind: now.storedValue))
                ON CONFLICT (bucket) DO UPDATE SET
                    tokens = CASE WHEN \(unsafeRaw: refilled) >= 1 THEN \(unsafeRaw: refilled) - 1
                                  ELSE \(unsafeRaw: refilled) END,
                    allowed = CASE WHEN \(unsafeRaw: refilled) >= 1 THEN 1 ELSE 0 END,
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
