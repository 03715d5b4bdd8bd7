import Foundation
import SQLKit

/// A message written to the outbox with the state change that causes it (a push, a webhook), already rendered: the
/// transactional outbox's one insert, which every store that queues such messages writes in its own transaction.
struct QueuedMessage: Sendable {
    var id: String
    var channel: OutboxChannel
    /// The factor id for a push, the URL for a webhook.
    var destination: String
    var payload: String

    /// Queues `messages` in one statement, in the caller's transaction.
    static func enqueue(_ messages: [QueuedMessage], projectId: String, in sql: any SQLDatabase, now: Date)
        async throws
    {
        guard !messages.isEmpty else { return }
        try await sql.raw(insertion(messages, projectId: projectId, now: now)).run()
    }

    /// The insert of `messages`, to chain into a larger statement.
    static func insertion(_ messages: [QueuedMessage], projectId: String, now: Date) -> SQLQueryString {
        let rows = messages.map { message -> SQLQueryString in
            """
            (\(bind: message.id), \(bind: projectId), \(bind: message.channel.rawValue), \(bind: message.destination), 'en',
             'pending', 0, \(bind: now.storedValue), \(bind: now.storedValue), \(bind: message.payload))
            """
        }
        return """
            INSERT INTO outbox (id, project_id, channel, destination, locale, status, attempts, next_attempt_at,
                                created_at, payload)
            VALUES \(rows.joined(separator: ", "))
            """
    }
}
