import Foundation
import SQLKit
import VerityCore

/// Possession flows. Every step is one conditional `UPDATE … RETURNING` that names the states it may start from and
/// the counter it may not pass, so concurrent or out-of-order requests can never skip a step or a limit.
struct PossessionStore: Sendable {
    let database: Database

    private static let columns = """
        id, project_id, flow, phone, final_target_url, locale, status, resends, retries, \
        number_changes, method, created_at, expires_at, completed_at, validated_at, backend_phone, test_number, \
        allow_test_numbers, carrier_check, owner
        """
    private static let table = RecordTable(
        name: "possession_flows", columns: columns, key: "id", scope: "project_id", record: record(from:))

    /// Stores a new flow; with `carrierStateHash`, its carrier check waits for the callback that brings that state.
    func insert(_ record: PossessionRecord, tokenHash: String, carrierStateHash: String? = nil) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO possession_flows (\(unsafeRaw: Self.columns), token_hash, carrier_state_hash)
                VALUES (\(bind: record.id), \(bind: record.projectId), \(bind: record.flow.rawValue),
                        \(bind: record.phone), \(bind: record.finalTargetURL), \(bind: record.locale),
                        \(bind: record.status.rawValue), 0, 0, 0, NULL, \(bind: record.createdAt.storedValue),
                        \(bind: record.expiresAt.storedValue), NULL, NULL, \(bind: record.phone), 0,
                        \(bind: record.allowsTestNumbers ? 1 : 0), \(bind: record.carrierCheck?.rawValue),
                        \(bind: record.owner), \(bind: tokenHash), \(bind: carrierStateHash))
                """
            ).run()
        }
    }

    /// The flow an auth token belongs to.
    func flow(tokenHash: String) async throws -> PossessionRecord? {
        try await database.lookupConfirmingMiss {
            try await Self.table.find(where: "token_hash", is: tokenHash, on: $0)
        }
    }

    func flow(id: String, projectId: String) async throws -> PossessionRecord? {
        try await database.lookupConfirmingMiss { try await Self.table.find(id, in: projectId, on: $0) }
    }

    /// The newest flow `owner` started for `phone`.
    func newestFlow(projectId: String, owner: String, phone: String) async throws -> PossessionRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM possession_flows
                WHERE project_id = \(bind: projectId) AND owner = \(bind: owner) AND phone = \(bind: phone)
                ORDER BY created_at DESC, id DESC LIMIT 1
                """
            ).first().map(Self.record(from:))
        }
    }

    /// Up to `limit` of a project's possession flows, newest first, after the flow `after`.
    func page(projectId: String, after: String?, limit: Int) async throws -> [PossessionRecord] {
        try await database.lookup {
            try await Self.table.page(in: projectId, after: after, limit: limit, newestFirst: true, on: $0)
        }
    }

    /// Runs `body` as one unit of work: a sending step, its code and its message commit together or not at all.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// What a sending step does besides sending.
    enum SendingStep: Sendable {
        /// The first send, to `phone` (the backend's, or the app's when the backend gave none).
        case start(phone: String)
        /// The same number again, while fewer than `limit` resends were made.
        case resend(phone: String, limit: Int)
        /// Another number, while fewer than `limit` changes were made.
        case changeNumber(to: String, limit: Int)
    }

    /// Where a sending step leaves the flow.
    enum Sent: Sendable {
        case code, link
        /// A test number's link counts as opened at once (like Prove's sandbox).
        case linkOpenedAtOnce
    }

    /// Moves a flow waiting in one of `from` through a sending step; nil when it is not in one of them, expired, or
    /// the step's limit is used up.
    func send(
        _ step: SendingStep, id: String, from: [PossessionStatus], sent: Sent, testNumber: Bool, now: Date,
        in work: UnitOfWork
    ) async throws -> PossessionRecord? {
        let status: SQLQueryString =
            switch sent {
            case .code: "status = 'otp_sent'"
            case .link: "status = 'link_sent'"
            case .linkOpenedAtOnce:
                "status = 'succeeded', method = 'instant_link', completed_at = \(bind: now.storedValue)"
            }
        let (changes, condition): (SQLQueryString, SQLQueryString) =
            switch step {
            case .start(let phone): ("phone = \(bind: phone)", "1 = 1")
            case .resend(let phone, let limit):
                ("resends = resends + 1", "resends < \(bind: limit) AND phone = \(bind: phone)")
            case .changeNumber(let phone, let limit):
                ("phone = \(bind: phone), number_changes = number_changes + 1", "number_changes < \(bind: limit)")
            }
        return try await self.step(
            id: id, from: from, set: status + ", test_number = \(bind: testNumber ? 1 : 0), " + changes,
            when: condition, now: now, in: work)
    }

    /// Records success by `method`; with `proving`, only while the flow still proves that number (a code or link
    /// sent to a number changed since proves nothing).
    func succeed(id: String, from: [PossessionStatus], method: PossessionMethod, proving phone: String?, now: Date)
        async throws -> PossessionRecord?
    {
        try await step(
            id: id, from: from,
            set: "status = 'succeeded', method = \(bind: method.rawValue), completed_at = \(bind: now.storedValue)",
            when: phone.map { "phone = \(bind: $0)" } ?? "1 = 1", now: now)
    }

    /// Takes the carrier check whose state hashes to `stateHash`, once: the state is cleared and the check moves to
    /// `checking`. Nil when no unfinished, unexpired flow waits for that state (unknown, used, or its flow is over).
    func claimCarrierCheck(stateHash: String, now: Date) async throws -> PossessionRecord? {
        try await database.execute { sql in
            try await sql.raw(
                """
                UPDATE possession_flows SET carrier_state_hash = NULL, carrier_check = 'checking'
                WHERE carrier_state_hash = \(bind: stateHash) AND carrier_check = 'pending'
                  AND status IN ('created', 'otp_sent', 'otp_wrong') AND expires_at > \(bind: now.storedValue)
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.record(from:))
        }
    }

    /// Ends a claimed carrier check with `outcome`; `verified` also proves possession of `phone` (method `silent`),
    /// while the flow is unfinished, unexpired and still proves that number. Nil when nothing matched.
    func finishCarrierCheck(id: String, outcome: CarrierCheckStatus, proving phone: String, now: Date) async throws
        -> PossessionRecord?
    {
        let success: SQLQueryString =
            outcome == .verified
            ? ", status = 'succeeded', method = 'silent', completed_at = \(bind: now.storedValue)" : ""
        return try await step(
            id: id, from: [.created, .otpSent, .otpWrong],
            set: "carrier_check = \(bind: outcome.rawValue)" + success,
            when: "carrier_check = 'checking' AND phone = \(bind: phone)", now: now)
    }

    /// Records a wrong code for `phone`: the flow waits for a retry while fewer than `maxRetries` were used (decided
    /// from the stored count, which a concurrent retry may have changed), and fails otherwise.
    func recordWrongCode(id: String, proving phone: String, maxRetries: Int, now: Date) async throws
        -> PossessionRecord?
    {
        try await step(
            id: id, from: [.otpSent],
            set: "status = CASE WHEN retries < \(bind: maxRetries) THEN 'otp_wrong' ELSE 'failed' END",
            when: "phone = \(bind: phone)", now: now)
    }

    /// Fails a flow whose code for `phone` is dead (it took every wrong entry a code allows).
    func fail(id: String, proving phone: String, now: Date) async throws -> PossessionRecord? {
        try await step(
            id: id, from: [.otpSent, .otpWrong], set: "status = 'failed'", when: "phone = \(bind: phone)", now: now)
    }

    /// Allows another code entry after a wrong one, while fewer than `maxRetries` were used.
    func retry(id: String, maxRetries: Int, now: Date) async throws -> PossessionRecord? {
        try await step(
            id: id, from: [.otpWrong], set: "status = 'otp_sent', retries = retries + 1",
            when: "retries < \(bind: maxRetries)", now: now)
    }

    /// Applies `changes` when the flow is in one of `from`, unexpired, and `condition` holds; nil otherwise (the
    /// caller re-reads the flow to say why).
    private func step(
        id: String, from: [PossessionStatus], set changes: SQLQueryString, when condition: SQLQueryString,
        now: Date, in work: UnitOfWork? = nil
    ) async throws -> PossessionRecord? {
        let states = SQLList(from.map { SQLBind($0.rawValue) })
        return try await database.execute(in: work) { sql in
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

    /// Marks a succeeded flow validated; nil when it was validated before, is not succeeded, or its lifetime is over.
    func markValidated(id: String, now: Date) async throws -> PossessionRecord? {
        try await database.execute { sql in
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
            testNumber: try row.decode(column: "test_number", as: Int.self) != 0,
            allowsTestNumbers: try row.decode(column: "allow_test_numbers", as: Int.self) != 0,
            carrierCheck: try row.decode(column: "carrier_check", as: String?.self).flatMap(
                CarrierCheckStatus.init(rawValue:)),
            owner: try row.decode(column: "owner", as: String?.self))
    }
}
