import Foundation
import SQLKit
import VerityCore

/// A stored possession flow.
struct PossessionRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var flow: PossessionFlowType
    /// The E.164 number, once the backend or the app gave one.
    var phone: String?
    var finalTargetURL: String?
    var locale: String
    var status: PossessionStatus
    var resends: Int
    var retries: Int
    var numberChanges: Int
    var method: PossessionMethod?
    var createdAt: Date
    var expiresAt: Date
    var completedAt: Date?
    var validatedAt: Date?
    /// The number the backend started the flow with, if it named one.
    var backendPhone: String?
    /// Whether `phone` is a test number of the project (fixed code, never sent to).
    var testNumber = false

    /// The status a client sees: an unfinished flow past its lifetime is expired.
    func status(at now: Date) -> PossessionStatus {
        switch status {
        case .succeeded, .failed: status
        default: expiresAt <= now ? .expired : status
        }
    }
}

/// Possession flows. Every step is one conditional `UPDATE … RETURNING` that names the states it may start from and
/// the counter it may not pass, so concurrent or out-of-order requests can never skip a step or a limit.
struct PossessionStore: Sendable {
    let database: Database

    private static let columns = """
        id, project_id, flow, phone, final_target_url, locale, status, resends, retries, \
        number_changes, method, created_at, expires_at, completed_at, validated_at, backend_phone, test_number
        """

    func insert(_ record: PossessionRecord, tokenHash: String) async throws {
        try await database.read { sql in
            try await sql.raw(
                """
                INSERT INTO possession_flows (\(unsafeRaw: Self.columns), token_hash)
                VALUES (\(bind: record.id), \(bind: record.projectId), \(bind: record.flow.rawValue),
                        \(bind: record.phone), \(bind: record.finalTargetURL), \(bind: record.locale),
                        \(bind: record.status.rawValue), 0, 0, 0, NULL, \(bind: record.createdAt.storedValue),
                        \(bind: record.expiresAt.storedValue), NULL, NULL, \(bind: record.phone), 0,
                        \(bind: tokenHash))
                """
            ).run()
        }
    }

    /// The flow an auth token belongs to.
    func flow(tokenHash: String) async throws -> PossessionRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.columns) FROM possession_flows WHERE token_hash = \(bind: tokenHash)"
            ).first().map(Self.record(from:))
        }
    }

    func flow(id: String, projectId: String) async throws -> PossessionRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM possession_flows
                WHERE id = \(bind: id) AND project_id = \(bind: projectId)
                """
            ).first().map(Self.record(from:))
        }
    }

    /// Runs `body` in one transaction: a step and the message it sends commit together or not at all.
    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await database.transaction(body)
    }

    /// Applies `changes` when the flow is in one of `from`, unexpired, and `condition` holds; nil otherwise (the
    /// caller re-reads the flow to say why). With `transaction`, the update runs in it.
    func step(
        id: String, from: [PossessionStatus], set changes: SQLQueryString, when condition: SQLQueryString = "1 = 1",
        now: Date, in transaction: (any SQLDatabase)? = nil
    ) async throws -> PossessionRecord? {
        let states = SQLList(from.map { SQLBind($0.rawValue) })
        return try await database.read(in: transaction) { sql in
            try await sql.raw(
                """
                UPDATE possession_flows SET \(changes)
                WHERE id = \(bind: id) AND status IN (\(states)) AND expires_at > \(bind: now.storedValue)
                  AND \(condition)
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.record(from:))
        }
    }

    /// Cancels the flow's pending codes or links of `purpose`, except the one to `keeping` (the number the flow now
    /// proves): after a number change, nothing sent to the old number may prove the new one.
    func cancelCodes(
        purpose: VerificationPurpose, projectId: String, keeping: String?, now: Date, in transaction: any SQLDatabase
    ) async throws {
        try await transaction.raw(
            """
            UPDATE verifications SET status = 'canceled', updated_at = \(bind: now.storedValue)
            WHERE project_id = \(bind: projectId) AND purpose = \(bind: purpose.rawValue) AND status = 'pending'
              AND destination <> \(bind: keeping ?? "")
            """
        ).run()
    }

    /// Marks a succeeded flow validated; nil when it was validated before, is not succeeded, or its lifetime is over.
    func markValidated(id: String, now: Date) async throws -> PossessionRecord? {
        try await database.read { sql in
            try await sql.raw(
                """
                UPDATE possession_flows SET validated_at = \(bind: now.storedValue)
                WHERE id = \(bind: id) AND status = 'succeeded' AND validated_at IS NULL
                  AND expires_at > \(bind: now.storedValue)
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.record(from:))
        }
    }

    private static func record(from row: any SQLRow) throws -> PossessionRecord {
        PossessionRecord(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            flow: try row.enumeration("flow", as: PossessionFlowType.self),
            phone: try row.decode(column: "phone", as: String?.self),
            finalTargetURL: try row.decode(column: "final_target_url", as: String?.self),
            locale: try row.decode(column: "locale", as: String.self),
            status: try row.enumeration("status", as: PossessionStatus.self),
            resends: try row.decode(column: "resends", as: Int.self),
            retries: try row.decode(column: "retries", as: Int.self),
            numberChanges: try row.decode(column: "number_changes", as: Int.self),
            method: try row.decode(column: "method", as: String?.self).flatMap(PossessionMethod.init(rawValue:)),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            completedAt: try row.optionalDate("completed_at"), validatedAt: try row.optionalDate("validated_at"),
            backendPhone: try row.decode(column: "backend_phone", as: String?.self),
            testNumber: try row.decode(column: "test_number", as: Int.self) != 0)
    }
}
