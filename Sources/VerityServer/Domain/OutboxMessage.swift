import Foundation
import VerityCore

/// A message waiting in (or delivered from) the outbox.
public struct OutboxMessage: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable {
        case pending
        case sent
        /// Gave up after too many failures.
        case dead
    }

    public var id: String
    public var projectId: String
    public var channel: Channel
    public var destination: String
    public var verificationId: String?
    public var locale: String
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    /// Which sender delivered it (`console`, `twilio`, `smtp`, `webhook`).
    public var sender: String?
    public var createdAt: Date
    public var sentAt: Date?
}
