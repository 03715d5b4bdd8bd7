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
                "SELECT \(unsafeRaw: Self.operatorColumns("o")) FROM console_operators o WHERE o.name = \(bind: name)"
            ).first().map { row in
                (try Self.consoleOperator(from: row), try row.decode(column: "totp_secret", as: String?.self))
            }
        }
    }

    /// Every operator, by name.
    func operators() async throws -> [ConsoleOperator] {
        try await database.lookup { sql in
            try await sql.raw(
                "SELECT \(unsafeRaw: Self.operatorColumns("o")) FROM console_operators o ORDER BY o.name"
            )
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

    /// The operator an unused, unexpired link signs in, with its sealed TOTP secret; nil for any other link, and for
    /// one that has had `codeAttempts` codes tried with it.
    func linkOperator(tokenHash: String, codeAttempts: Int, now: Date) async throws
        -> (ConsoleOperator, sealedTOTPSecret: String?)?
    {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.operatorColumns("o"))
                FROM console_sign_in_links l JOIN console_operators o ON o.id = l.operator_id
                WHERE l.token_hash = \(bind: tokenHash) AND l.used_at IS NULL AND l.expires_at > \(bind: now.storedValue)
                  AND l.code_attempts < \(bind: codeAttempts)
                """
            ).first().map { row in
                (try Self.consoleOperator(from: row), try row.decode(column: "totp_secret", as: String?.self))
            }
        }
    }

    /// What ``takeCodeAttempt(tokenHash:subjects:perLink:lockout:forgetBefore:now:)`` found.
    enum CodeAttempt: Equatable {
        /// The attempt is counted: the link's `n`th code.
        case taken(Int)
        /// A subject is locked out until then; nothing was counted.
        case locked(until: Date)
        /// The link is used, expired, unknown or has had its codes; nothing was counted.
        case spentLink
    }

    /// Counts one code tried with the link and against each of `subjects` (an operator, a client address), in one
    /// transaction and before the code is checked, so concurrent guesses never pass a limit: the link takes at most
    /// `perLink` codes; a subject's run of attempts without a right one grows (a run last added to before
    /// `forgetBefore` starts again) and, once `lockout` of its length is not nil, locks the subject for that long.
    /// A subject still locked refuses the attempt, and nothing is counted anywhere.
    func takeCodeAttempt(
        tokenHash: String, subjects: [String], perLink: Int, lockout: @escaping @Sendable (Int) -> TimeInterval?,
        forgetBefore: Date, now: Date
    ) async throws -> CodeAttempt {
        do {
            return try await database.transaction { sql in
                for subject in subjects {
                    guard
                        let failures = try await sql.raw(
                            """
                            INSERT INTO console_sign_in_failures (subject, failures, last_failure_at)
                            VALUES (\(bind: subject), 1, \(bind: now.storedValue))
                            ON CONFLICT (subject) DO UPDATE SET
                                failures = CASE WHEN console_sign_in_failures.last_failure_at < \(bind: forgetBefore.storedValue)
                                           THEN 1 ELSE console_sign_in_failures.failures + 1 END,
                                last_failure_at = \(bind: now.storedValue)
                            WHERE console_sign_in_failures.locked_until IS NULL
                               OR console_sign_in_failures.locked_until <= \(bind: now.storedValue)
                            RETURNING failures
                            """
                        ).first(decodingColumn: "failures", as: Int.self)
                    else {
                        let until = try await sql.raw(
                            "SELECT locked_until FROM console_sign_in_failures WHERE subject = \(bind: subject)"
                        ).first(decodingColumn: "locked_until", as: Double.self)
                        throw Refused(attempt: .locked(until: Date(timeIntervalSince1970: until ?? now.storedValue)))
                    }
                    if let duration = lockout(failures) {
                        try await sql.raw(
                            """
                            UPDATE console_sign_in_failures
                            SET locked_until = \(bind: now.addingTimeInterval(duration).storedValue)
                            WHERE subject = \(bind: subject)
                            """
                        ).run()
                    }
                }
                guard
                    let attempt = try await sql.raw(
                        """
                        UPDATE console_sign_in_links SET code_attempts = code_attempts + 1
                        WHERE token_hash = \(bind: tokenHash) AND used_at IS NULL
                          AND expires_at > \(bind: now.storedValue) AND code_attempts < \(bind: perLink)
                        RETURNING code_attempts
                        """
                    ).first(decodingColumn: "code_attempts", as: Int.self)
                else { throw Refused(attempt: .spentLink) }
                return .taken(attempt)
            }
        } catch let refused as Refused {
            return refused.attempt
        }
    }

    /// Thrown inside ``takeCodeAttempt(tokenHash:subjects:perLink:lockout:forgetBefore:now:)`` to roll back what
    /// it counted.
    private struct Refused: Error {
        var attempt: CodeAttempt
    }

    /// Uses the link and opens `session` for its operator, in one transaction (or `work`); with `totpCounter`, also moves the
    /// operator's last used TOTP step up to it, and ends the runs of failed attempts of `clearing` (the code was
    /// right). Nil (and nothing written) when the link is used, expired or unknown, or that TOTP step (or a later
    /// one) signed in already.
    func signIn(
        tokenHash: String, sessionId: String, sessionTokenHash: String, totpCounter: UInt64?, clearing: [String] = [],
        now: Date, in work: UnitOfWork? = nil
    ) async throws -> String? {
        try await database.transaction(in: work) { sql in
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
                for subject in clearing {
                    try await sql.raw("DELETE FROM console_sign_in_failures WHERE subject = \(bind: subject)").run()
                }
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

    /// The columns ``consoleOperator(from:)`` reads, of the operator table aliased `alias`: whether the operator has
    /// a passkey is read with it, since it decides how they sign in.
    private static func operatorColumns(_ alias: String) -> String {
        """
        \(alias).id, \(alias).name, \(alias).totp_secret, \(alias).created_at,
        CASE WHEN EXISTS (SELECT 1 FROM console_passkeys p WHERE p.operator_id = \(alias).id) THEN 1 ELSE 0 END
            AS has_passkeys
        """
    }

    private static func consoleOperator(from row: any SQLRow) throws -> ConsoleOperator {
        ConsoleOperator(
            id: try row.decode(column: "id", as: String.self), name: try row.decode(column: "name", as: String.self),
            hasTOTP: try row.decode(column: "totp_secret", as: String?.self) != nil,
            hasPasskeys: try row.decode(column: "has_passkeys", as: Int.self) != 0,
            createdAt: try row.date("created_at"))
    }
}
