import Foundation
import VerityCore

/// Takes tokens and turns an empty bucket into a 429 with `Retry-After`.
struct RateLimiter: Sendable {
    private let store: RateLimitStore

    init(store: RateLimitStore) {
        self.store = store
    }

    /// Takes a token from `bucket`; with `work`, inside it, so a rollback gives the token back.
    func take(_ bucket: String, _ policy: RateLimitPolicy, now: Date, in work: UnitOfWork? = nil)
        async throws
    {
        let (allowed, tokens) = try await store.take(
            bucket: bucket, capacity: Double(policy.capacity), refillPerSecond: policy.refillPerSecond, now: now,
            in: work)
        guard allowed else {
            let wait = Int(((1 - tokens) / policy.refillPerSecond).rounded(.up))
            throw VerityError(
                .rateLimited, "Too many requests; try again in \(max(wait, 1)) seconds.", retryAfter: max(wait, 1))
        }
    }
}
