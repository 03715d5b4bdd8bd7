import Foundation
import SQLKit
import VerityCore

/// How a ``TwilioWebhook`` is stored: the `twilio_webhooks` columns it is made from, and the record a row of them
/// holds.
///
/// Kept beside the record rather than inside its store, so that another aggregate's store may read the table in a
/// joined `SELECT` without calling this one.
extension TwilioWebhook {
    /// The `twilio_webhooks` columns a record is made from, as a `SELECT` list.
    static let columns =
        "sid, service_sid, friendly_name, event_types, webhook_url, status, version, created_at, updated_at"

    /// The record a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        self.init(
            sid: try row.decode(column: "sid", as: String.self),
            serviceSid: try row.decode(column: "service_sid", as: String.self),
            friendlyName: try row.decode(column: "friendly_name", as: String.self),
            eventTypes: try JSONDecoder().decode(
                [String].self, from: Data(try row.decode(column: "event_types", as: String.self).utf8)),
            url: try row.decode(column: "webhook_url", as: String.self),
            enabled: try row.decode(column: "status", as: String.self) == "enabled",
            version: try row.decode(column: "version", as: String.self),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }
}
