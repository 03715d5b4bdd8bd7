import Foundation
import SQLKit

/// The Twilio face's Verify services (`VA…`), each inside one project.
struct TwilioServiceStore: Sendable {
    let database: Database

    private static let columns = """
        sid, project_id, friendly_name, code_length, push_include_date, push_apn_credential_sid, \
        push_fcm_credential_sid, totp_issuer, totp_time_step, totp_code_length, totp_skew, created_at, updated_at, \
        passkeys
        """
    private static let table = RecordTable(
        name: "twilio_services", columns: columns, key: "sid", scope: "project_id", record: service(from:))

    func insert(_ service: TwilioServiceRecord) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO twilio_services (\(unsafeRaw: Self.columns))
                VALUES (\(bind: service.sid), \(bind: service.projectId), \(bind: service.friendlyName),
                        \(bind: service.codeLength), \(bind: service.push.includeDate ? 1 : 0),
                        \(bind: service.push.apnCredentialSid), \(bind: service.push.fcmCredentialSid),
                        \(bind: service.totp.issuer), \(bind: service.totp.timeStep), \(bind: service.totp.codeLength),
                        \(bind: service.totp.skew), \(bind: service.createdAt.storedValue),
                        \(bind: service.updatedAt.storedValue), \(bind: try Self.passkeys(service)))
                """
            ).run()
        }
    }

    func service(sid: String, projectId: String) async throws -> TwilioServiceRecord? {
        try await database.lookupConfirmingMiss { try await Self.table.find(sid, in: projectId, on: $0) }
    }

    /// One page of the project's services in creation order, starting after the service `after` names.
    func services(projectId: String, after: String?, limit: Int) async throws -> [TwilioServiceRecord] {
        try await database.execute { try await Self.table.page(in: projectId, after: after, limit: limit, on: $0) }
    }

    /// Saves changed settings; false when the service no longer exists.
    func update(_ service: TwilioServiceRecord) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE twilio_services
                SET friendly_name = \(bind: service.friendlyName), code_length = \(bind: service.codeLength),
                    push_include_date = \(bind: service.push.includeDate ? 1 : 0),
                    push_apn_credential_sid = \(bind: service.push.apnCredentialSid),
                    push_fcm_credential_sid = \(bind: service.push.fcmCredentialSid),
                    totp_issuer = \(bind: service.totp.issuer), totp_time_step = \(bind: service.totp.timeStep),
                    totp_code_length = \(bind: service.totp.codeLength), totp_skew = \(bind: service.totp.skew),
                    updated_at = \(bind: service.updatedAt.storedValue), passkeys = \(bind: try Self.passkeys(service))
                WHERE sid = \(bind: service.sid) AND project_id = \(bind: service.projectId)
                RETURNING sid
                """
            ).first() != nil
        }
    }

    /// Deletes the service in the caller's unit of work, its entities and webhooks by cascade (its factors and
    /// access tokens go beside it, ``TwilioPush/deleteService(_:in:)``); false when the project has no such service.
    func delete(sid: String, projectId: String, in work: UnitOfWork) async throws -> Bool {
        try await Self.table.delete(sid, in: projectId, on: work.sql)
    }

    private static func service(from row: any SQLRow) throws -> TwilioServiceRecord {
        TwilioServiceRecord(
            sid: try row.decode(column: "sid", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            friendlyName: try row.decode(column: "friendly_name", as: String.self),
            codeLength: try row.decode(column: "code_length", as: Int.self),
            push: .init(
                includeDate: try row.decode(column: "push_include_date", as: Int.self) != 0,
                apnCredentialSid: try row.decode(column: "push_apn_credential_sid", as: String?.self),
                fcmCredentialSid: try row.decode(column: "push_fcm_credential_sid", as: String?.self)),
            totp: .init(
                issuer: try row.decode(column: "totp_issuer", as: String?.self),
                timeStep: try row.decode(column: "totp_time_step", as: Int.self),
                codeLength: try row.decode(column: "totp_code_length", as: Int.self),
                skew: try row.decode(column: "totp_skew", as: Int.self)),
            passkeys: try row.decode(column: "passkeys", as: String?.self).map { text in
                do {
                    return try JSONDecoder().decode(TwilioPasskeyConfig.self, from: Data(text.utf8))
                } catch {
                    throw StoreError.corruptValue(column: "twilio_services.passkeys")
                }
            } ?? TwilioPasskeyConfig(),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    /// The passkey settings as stored: JSON, or NULL while none is set.
    private static func passkeys(_ service: TwilioServiceRecord) throws -> String? {
        service.passkeys.isEmpty ? nil : String(decoding: try JSONEncoder().encode(service.passkeys), as: UTF8.self)
    }
}
