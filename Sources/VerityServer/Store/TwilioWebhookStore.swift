import Foundation
import SQLKit

/// The Twilio face's webhooks.
struct TwilioWebhookStore: Sendable {
    let database: Database

    private static let table = RecordTable(
        name: "twilio_webhooks", columns: TwilioWebhook.columns, key: "sid", scope: "service_sid",
        record: TwilioWebhook.init(row:))

    func insert(_ webhook: TwilioWebhook) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO twilio_webhooks (\(unsafeRaw: TwilioWebhook.columns))
                VALUES (\(bind: webhook.sid), \(bind: webhook.serviceSid), \(bind: webhook.friendlyName),
                        \(bind: try Self.json(webhook.eventTypes)), \(bind: webhook.url),
                        \(bind: webhook.enabled ? "enabled" : "disabled"), \(bind: webhook.version),
                        \(bind: webhook.createdAt.storedValue), \(bind: webhook.updatedAt.storedValue))
                """
            ).run()
        }
    }

    func update(_ webhook: TwilioWebhook) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE twilio_webhooks
                SET friendly_name = \(bind: webhook.friendlyName), event_types = \(bind: try Self.json(webhook.eventTypes)),
                    webhook_url = \(bind: webhook.url), status = \(bind: webhook.enabled ? "enabled" : "disabled"),
                    version = \(bind: webhook.version), updated_at = \(bind: webhook.updatedAt.storedValue)
                WHERE sid = \(bind: webhook.sid) AND service_sid = \(bind: webhook.serviceSid)
                RETURNING sid
                """
            ).first() != nil
        }
    }

    func webhook(sid: String, serviceSid: String) async throws -> TwilioWebhook? {
        try await database.lookupConfirmingMiss { try await Self.table.find(sid, in: serviceSid, on: $0) }
    }

    /// One page of the service's webhooks in creation order, starting after the webhook `after` names.
    func webhooks(serviceSid: String, after: String?, limit: Int) async throws -> [TwilioWebhook] {
        try await database.execute { try await Self.table.page(in: serviceSid, after: after, limit: limit, on: $0) }
    }

    func delete(sid: String, serviceSid: String) async throws -> Bool {
        try await database.execute { try await Self.table.delete(sid, in: serviceSid, on: $0) }
    }

    private static func json(_ value: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }
}
