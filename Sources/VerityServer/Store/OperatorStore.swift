import Foundation
import SQLKit

/// Console operators, their one-time sign-in links, their browser sessions and the audit trail of what they did.
struct OperatorStore: Sendable {
    let database: Database

    /// Adds an operator; false when the name is taken.
    func insert(_ consoleOperator: ConsoleOperator, sealedTOTPSecret: String?) async throws -> Bool {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO console_operators (id, name, totp_secret, created_at)
                VALUES (\(bind: consoleOperator.id), \(bind: consoleOperator.name), \(bind: sealedTOTPSecret),
                        \(bind: consoleOperator.createdAt.storedValue))
                ON CONFLICT (name) DO NOTHING
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// The operator called `name`, with its sealed TOTP secret (nil when it signs in without one).
    func operatorNamed(_ name: String) async throws -> (ConsoleOperator, sealedTOTPSecret: String?)? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                "SELECT id, name, totp_secret, created_at FROM console_operators WHERE name = \(bind: name)"
            ).first().map { row in
                (try Self.consoleOperator(from: row), try row.decode(column: "totp_secret", as: String?.self))
            }
        }
    }

    /// Every operator, by name.
    func operators() async throws -> [ConsoleOperator] {
        try await database.lookup { sql in
            try await sql.raw("SELECT id, name, totp_secret, created_at FROM console_operators ORDER BY name")
                .all().map(Self.consoleOperator(from:))
        }
    }

    /// Records a new sign-in link for an operator.
    func insertLink(tokenHash: String, operatorId: String, now: Date, expiresAt: Date) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO console_sign_in_links (token_hash, operator_id, created_at, expires_at)
                VALUES (\(bind: tokenHash), \(bind: operatorId), \(bind: now.storedValue), \(bind: expiresAt.storedValue))
                """
            ).run()
        }
    }

    /// The operator an unused, unexpired link signs in, with its sealed TOTP secret; nil for any other link.
    func linkOperator(tokenHash: String, now: Date) async throws -> (ConsoleOperator, sealedTOTPSecret: String?)? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT o.id, o.name, o.totp_secret, o.created_at
                FROM console_sign_in_links l JOIN console_operators o ON o.id = l.operator_id
                WHERE l.token_hash = \(bind: tokenHash) AND l.used_at IS NULL AND l.expires_at > \(bind: now.storedValue)
                """
            ).first().map { row in
                (try Self.consoleOperator(from: row), try row.decode(column: "totp_secret", as: String?.self))
            }
        }
    }

    /// Uses the link and opens `session` for its operator, in one transaction; with `totpCounter`, also moves the
    /// operator's last used TOTP step up to it. Nil (and nothing written) when the link is used, expired or unknown,
    /// or that TOTP step (or a later one) signed in already.
    func signIn(
        tokenHash: String, sessionId: String, sessionTokenHash: String, totpCounter: UInt64?, now: Date
    ) async throws -> String? {
        try await database.transaction { sql in
            guard
                let operatorId = try await sql.raw(
                    """
                    UPDATE console_sign_in_links SET used_at = \(bind: now.storedValue)
                    WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL AND expires_at > \(bind: now.storedValue)
                    RETURNING operator_id
                    """
                ).first(decodingColumn: "operator_id", as: String.self)
            else { return nil }
            if let totpCounter {
                let step = Int64(clamping: totpCounter)
                guard
                    try await sql.raw(
                        """
                        UPDATE console_operators SET totp_counter = \(bind: step)
                        WHERE id = \(bind: operatorId) AND totp_counter < \(bind: step)
                        RETURNING id
                        """
                    ).first() != nil
                else { throw ReplayedStep() }
            }
            try await sql.raw(
                """
                INSERT INTO console_sessions (id, token_hash, operator_id, created_at, last_seen_at)
                VALUES (\(bind: sessionId), \(bind: sessionTokenHash), \(bind: operatorId), \(bind: now.storedValue),
                        \(bind: now.storedValue))
                """
            ).run()
            return operatorId
        }
    }

    /// Thrown inside ``signIn`` to roll the link's use back when the TOTP step was used already.
    struct ReplayedStep: Error {}

    /// The live session the cookie names, marked as seen now; nil when it ended, was idle since before
    /// `idleSince` or started before `startedSince`.
    func touchSession(tokenHash: String, now: Date, idleSince: Date, startedSince: Date) async throws
        -> ConsoleSessionRecord?
    {
        try await database.execute { sql in
            guard
                let row = try await sql.raw(
                    """
                    UPDATE console_sessions SET last_seen_at = \(bind: now.storedValue)
                    WHERE token_hash = \(bind: tokenHash) AND ended_at IS NULL
                      AND last_seen_at > \(bind: idleSince.storedValue)
                      AND created_at > \(bind: startedSince.storedValue)
                    RETURNING id, operator_id
                    """
                ).first()
            else { return nil }
            let operatorId = try row.decode(column: "operator_id", as: String.self)
            let name = try await sql.raw("SELECT name FROM console_operators WHERE id = \(bind: operatorId)")
                .first(decodingColumn: "name", as: String.self)
            return ConsoleSessionRecord(
                id: try row.decode(column: "id", as: String.self), operatorId: operatorId, operatorName: name ?? "")
        }
    }

    /// Ends a session (sign-out).
    func endSession(id: String, now: Date) async throws {
        try await database.execute { sql in
            try await sql.raw(
                "UPDATE console_sessions SET ended_at = \(bind: now.storedValue) WHERE id = \(bind: id)"
            ).run()
        }
    }

    /// Appends to the audit trail.
    func record(_ entry: AuditEntry) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                INSERT INTO console_audit (id, operator_id, action, target, created_at)
                VALUES (\(bind: entry.id), \(bind: entry.operatorId), \(bind: entry.action), \(bind: entry.target),
                        \(bind: entry.createdAt.storedValue))
                """
            ).run()
        }
    }

    /// Up to `limit` audit entries, newest first, after the entry `after`; with `search`, only those whose action
    /// or target starts with it, in any case (both sides lowered: SQLite's LIKE ignores ASCII case, PostgreSQL's
    /// does not).
    func audit(search: String?, after: String?, limit: Int) async throws -> [AuditEntry] {
        try await database.lookup { sql in
            let filter: SQLQueryString =
                search.map { (text: String) -> SQLQueryString in
                    let pattern = Self.prefixPattern(text.lowercased())
                    return """
                        AND (lower(action) LIKE \(bind: pattern) ESCAPE '\\' OR lower(target) LIKE \(bind: pattern) ESCAPE '\\')
                        """
                } ?? ""
            return try await Self.auditTable.newestOfAll(filter: filter, after: after, limit: limit, on: sql)
        }
    }

    private static let auditTable = RecordTable(
        name: "console_audit",
        columns: """
            id, operator_id, action, target, created_at,
            (SELECT name FROM console_operators o WHERE o.id = console_audit.operator_id) AS name
            """,
        key: "id", scope: "operator_id"
    ) { row in
        AuditEntry(
            id: try row.decode(column: "id", as: String.self),
            operatorId: try row.decode(column: "operator_id", as: String.self),
            operatorName: try row.decode(column: "name", as: String?.self),
            action: try row.decode(column: "action", as: String.self),
            target: try row.decode(column: "target", as: String.self), createdAt: try row.date("created_at"))
    }

    /// `text%` with LIKE's wildcards in `text` escaped.
    static func prefixPattern(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    private static func consoleOperator(from row: any SQLRow) throws -> ConsoleOperator {
        ConsoleOperator(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            hasTOTP: try row.decode(column: "totp_secret", as: String?.self) != nil,
            createdAt: try row.date("created_at"))
    }
}
