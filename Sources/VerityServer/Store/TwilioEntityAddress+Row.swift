import Foundation
import SQLKit

/// How a ``TwilioEntityAddress`` is stored: `twilio_passkey_factors` and `twilio_passkey_challenges` keep it in the
/// same four columns.
extension TwilioEntityAddress {
    /// The columns of an address, as a part of a `SELECT` or `INSERT` list.
    static let columns = "project_id, service_sid, identity, entity_sid"

    /// The stored values of ``columns``, in that order.
    var values: SQLQueryString {
        "\(bind: projectId), \(bind: serviceSid), \(bind: identity), \(bind: entitySid)"
    }

    /// The address a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        self.init(
            projectId: try row.decode(column: "project_id", as: String.self),
            serviceSid: try row.decode(column: "service_sid", as: String.self),
            identity: try row.decode(column: "identity", as: String.self),
            entitySid: try row.decode(column: "entity_sid", as: String.self))
    }
}
