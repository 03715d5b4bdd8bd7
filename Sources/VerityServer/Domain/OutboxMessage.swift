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
    public var channel: OutboxChannel
    /// A phone number or email address; a factor id for a push; a URL for a webhook; an app verification's id.
    public var destination: String
    public var verificationId: String?
    public var locale: String
    /// The JSON body of a push or webhook message (never holds a code).
    public var payload: String?
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    /// Which sender delivered it (`console`, `twilio`, `smtp`, `webhook`, `meta`).
    public var sender: String?
    public var createdAt: Date
    public var sentAt: Date?
    /// The provider's id for the sent message (`wamid.…`, `SM…`, `CA…`), which its delivery-status callbacks name.
    public var providerMessageId: String?
}
