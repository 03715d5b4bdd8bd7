import Foundation
import VerityCore

/// A token bucket: up to `capacity` requests at once, refilled at `capacity` per `period`.
public struct RateLimitPolicy: Sendable, Equatable, CustomStringConvertible {
    public var capacity: Int
    public var period: TimeInterval

    public init(capacity: Int, period: TimeInterval) {
        self.capacity = capacity
        self.period = period
    }

    /// Parses `N/s`, `N/m` or `N/h` (for example `10/h`: bursts of 10, 10 more each hour).
    public init(parsing text: String) throws(ConfigurationError) {
        let parts = text.split(separator: "/")
        let periods: [Substring: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard parts.count == 2, let capacity = Int(parts[0]), capacity > 0, let period = periods[parts[1]] else {
            throw ConfigurationError("'\(text)' is not a rate such as 10/h, 5/m or 100/s.")
        }
        self.init(capacity: capacity, period: period)
    }

    public var description: String {
        let unit = [1: "s", 60: "m", 3600: "h", 86_400: "d"][Int(period)] ?? "\(Int(period))s"
        return "\(capacity)/\(unit)"
    }

    var refillPerSecond: Double { Double(capacity) / period }
}

/// The rate limits that guard sending, shared by all nodes through the database.
public struct RateLimits: Sendable, Equatable {
    /// Starts (sends) to one destination in one project.
    public var perDestination = RateLimitPolicy(capacity: 10, period: 3600)
    /// Starts to one block of 1,000 neighbouring phone numbers in one project (sequential-number SMS pumping).
    public var perNumberBlock = RateLimitPolicy(capacity: 20, period: 3600)
    /// Starts in one project, all destinations together.
    public var perProject = RateLimitPolicy(capacity: 100, period: 1)
    /// App-facing sign-in requests (`/v1/auth/…` without a session) from one client address, per project.
    public var perClientAddress = RateLimitPolicy(capacity: 60, period: 60)
    /// Sign-in code starts and checks that name one login id (test numbers are exempt).
    public var perLoginId = RateLimitPolicy(capacity: 30, period: 3600)

    public init() {}
}

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
