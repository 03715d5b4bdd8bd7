import Foundation
import SQLKit

/// Events to queue in a write's own transaction, for each enabled webhook of the service that takes them; so an
/// event is never lost, nor sent for a write that did not happen.
struct TwilioEventQueue: Sendable {
    var events: [TwilioEvent]
    var serviceSid: String
    var projectId: String
    var now: Date
    var messageId: @Sendable () -> String

    /// Queues the events as part of a caller's unit of work (an answer's events).
    func enqueue(in work: UnitOfWork) async throws {
        try await enqueue(in: work.sql)
    }

    func enqueue(in sql: any SQLDatabase) async throws {
        guard !events.isEmpty else { return }
        // The service's webhooks are read here, in the write's transaction, in one SELECT of their table.
        let webhooks = try await sql.raw(
            """
            SELECT \(unsafeRaw: TwilioWebhook.columns) FROM twilio_webhooks
            WHERE service_sid = \(bind: serviceSid) AND status = 'enabled'
            """
        ).all().map(TwilioWebhook.init(row:))
        var messages: [QueuedMessage] = []
        for event in events {
            for webhook in webhooks where webhook.eventTypes.contains(event.type) || webhook.eventTypes.contains("*") {
                let id = messageId()
                var params = event.params
                params["uuid"] = id
                params["type"] = event.type
                params["sent_at"] = now.formatted(TwilioJSON.dateFormat)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                messages.append(
                    .init(
                        id: id, channel: .twilioWebhook, destination: webhook.url,
                        payload: String(decoding: try encoder.encode(params), as: UTF8.self)))
            }
        }
        try await QueuedMessage.enqueue(messages, projectId: projectId, in: sql, now: now)
    }
}
