import Foundation
import VerityCore

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
