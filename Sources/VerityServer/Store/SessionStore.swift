import Foundation
import SQLKit
import VerityCore

/// Sessions, their refresh tokens (hashes only) and the security events about them.
///
/// Refresh tokens rotate: each refresh marks the presented token `used` and issues the next one in the same
/// conditional statement, so two refreshes with one token cannot both succeed. A `used` token presented again
/// means it was copied: the whole session (the token family) is revoked and a security event recorded.
struct SessionStore: Sendable {
    let database: Database

    private static let columns =
        "id, project_id, user_id, amr, acr, auth_time, created_at, expires_at, revoked_at, claims"

    /// What a sign-in did.
    enum SignInOutcome: Sendable {
        case signedIn(User, firstSeen: Bool)
        case userDisabled
    }

    /// Runs `body` in the caller's unit of work when there is one, otherwise as one of its own: a sign-in's user and
    /// session, with what proved it.
    func unitOfWork<T: Sendable>(in work: UnitOfWork?, _ body: @Sendable (UnitOfWork) async throws -> T)
        async throws -> T
    {
        try await database.unitOfWork(in: work, body)
    }

    /// Signs in the user holding `loginKey` and opens `session` with its first refresh token in one statement, where
    /// the engine has one (PostgreSQL): the user's last sign-in, the session and its token, none of them when the
    /// user is disabled. The user comes back without its roles. Nil when no user holds `loginKey` or the engine runs
    /// the sign-in in steps (the caller then finds or creates the user and calls ``open(_:refreshHash:now:in:)``).
    func signInKnownUser(
        loginKey: String, session: SessionRecord, refreshHash: String, now: Date, in work: UnitOfWork
    ) async throws -> SignInOutcome? {
        guard database.engine == .postgres else { return nil }
        return try await Self.signInKnownUser(
            loginKey: loginKey, session: session, refreshHash: refreshHash, now: now, in: work.sql)
    }

    /// Opens `session` for its user, with its first refresh token, in `work`.
    func open(_ session: SessionRecord, refreshHash: String, now: Date, in work: UnitOfWork) async throws {
        let sql = work.sql
        try await sql.raw(
            """
            INSERT INTO sessions (id, project_id, user_id, amr, acr, auth_time, created_at, refreshed_at,
                                  expires_at, claims)
            VALUES (\(bind: session.id), \(bind: session.projectId), \(bind: session.userId),
                    \(bind: try Self.encode(session.amr)), \(bind: session.acr), \(bind: session.authTime.storedValue),
                    \(bind: now.storedValue), \(bind: now.storedValue), \(bind: session.expiresAt.storedValue),
                    \(bind: try Self.encode(claims: session.claims)))
            """
        ).run()
        try await Self.insertToken(refreshHash, session: session, now: now, in: sql)
    }

    /// ``signInKnownUser(loginKey:session:refreshHash:now:in:)``'s one statement of chained writes instead of four. It
    /// reads and touches the user's row itself (the users table, in the same statement) rather than calling the
    /// users' store, which would cost the round trips it saves.
    private static func signInKnownUser(
        loginKey: String, session: SessionRecord, refreshHash: String, now: Date, in sql: any SQLDatabase
    ) async throws -> SignInOutcome? {
        guard
            let row = try await sql.raw(
                """
                WITH found AS (
                    SELECT id, disabled FROM users
                    WHERE project_id = \(bind: session.projectId) AND id = (
                        SELECT user_id FROM user_login_ids
                        WHERE project_id = \(bind: session.projectId) AND login_key = \(bind: loginKey))),
                touched AS (
                    UPDATE users SET last_sign_in_at = \(bind: now.storedValue)
                    WHERE id = (SELECT id FROM found WHERE disabled = 0)
                    RETURNING \(unsafeRaw: User.columns)),
                opened AS (
                    INSERT INTO sessions (id, project_id, user_id, amr, acr, auth_time, created_at, refreshed_at,
                                          expires_at, claims)
                    SELECT \(bind: session.id), \(bind: session.projectId), touched.id,
                           \(bind: try Self.encode(session.amr)), \(bind: session.acr),
                           \(bind: session.authTime.storedValue), \(bind: now.storedValue), \(bind: now.storedValue),
                           \(bind: session.expiresAt.storedValue), \(bind: try Self.encode(claims: session.claims))
                    FROM touched
                    RETURNING id),
                token AS (
                    INSERT INTO refresh_tokens (token_hash, session_id, project_id, status, created_at, expires_at)
                    SELECT \(bind: refreshHash), opened.id, \(bind: session.projectId), 'active',
                           \(bind: now.storedValue), \(bind: session.expiresAt.storedValue)
                    FROM opened
                    RETURNING session_id)
                SELECT (SELECT count(*) FROM found) AS found_count, touched.*
                FROM (SELECT 1) AS one LEFT JOIN touched ON true
                """
            ).first(),
            try row.decode(column: "found_count", as: Int.self) > 0
        else { return nil }
        guard try row.decode(column: "id", as: String?.self) != nil else { return .userDisabled }
        return .signedIn(try User(row: row), firstSeen: false)
    }

    /// What presenting a refresh token did.
    enum RefreshOutcome: Sendable {
        /// The token was good: it is now used, and `nextHash` is the session's active token unless the session's user
        /// is disabled or gone (the caller reads the user and refuses those).
        case rotated(SessionRecord)
        /// The token had been used before: its session is now revoked.
        case reused(SessionRecord)
        /// Unknown, expired or revoked.
        case invalid
    }

    /// Rotates a refresh token and slides the session's expiry to `expiresAt`.
    ///
    /// - Parameters:
    ///   - event: The id and client address recorded if the token turns out to be reused.
    func refresh(
        hash: String, projectId: String, nextHash: String, expiresAt: Date, event: (id: String, ip: String?),
        now: Date
    ) async throws -> RefreshOutcome {
        if database.engine == .postgres {
            return try await refreshInOneStatement(
                hash: hash, projectId: projectId, nextHash: nextHash, expiresAt: expiresAt, event: event, now: now)
        }
        return try await database.transaction { sql in
            guard
                let sessionId = try await sql.raw(
                    """
                    UPDATE refresh_tokens SET status = 'used', used_at = \(bind: now.storedValue)
                    WHERE token_hash = \(bind: hash) AND project_id = \(bind: projectId) AND status = 'active'
                      AND expires_at > \(bind: now.storedValue)
                    RETURNING session_id
                    """
                ).first(decodingColumn: "session_id", as: String.self)
            else {
                return try await Self.refuse(hash: hash, projectId: projectId, event: event, now: now, in: sql)
            }
            guard
                let session = try await sql.raw(
                    """
                    UPDATE sessions SET refreshed_at = \(bind: now.storedValue),
                        expires_at = \(bind: expiresAt.storedValue)
                    WHERE id = \(bind: sessionId) AND revoked_at IS NULL AND expires_at > \(bind: now.storedValue)
                    RETURNING \(unsafeRaw: Self.columns)
                    """
                ).first().map(Self.session(from:))
            else { return .invalid }
            try await sql.raw(
                Self.nextTokenUnlessUserDisabled(nextHash, sessions: "sessions", now: now, id: session.id)
            ).run()
            return .rotated(session)
        }
    }

    /// Inserts the next refresh token for each session that `sessions` (a table, or the statement's updated rows)
    /// holds, unless its user is disabled or gone. It reads the users table in this one statement rather than calling
    /// the users' store, so the check costs no round trip of its own.
    private static func nextTokenUnlessUserDisabled(_ hash: String, sessions: String, now: Date, id: String? = nil)
        -> SQLQueryString
    {
        let only: SQLQueryString = id.map { "AND s.id = \(bind: $0)" } ?? ""
        return """
            INSERT INTO refresh_tokens (token_hash, session_id, project_id, status, created_at, expires_at)
            SELECT \(bind: hash), s.id, s.project_id, 'active', \(bind: now.storedValue), s.expires_at
            FROM \(unsafeRaw: sessions) s JOIN users u ON u.id = s.user_id AND u.project_id = s.project_id
            WHERE u.disabled = 0 \(only)
            """
    }

    /// ``refresh(hash:projectId:nextHash:expiresAt:event:now:)`` on PostgreSQL, where one statement of chained
    /// updates does what the transaction does on SQLite: the presented token is used, the session slides, and the
    /// next token is inserted unless the user is disabled. One round trip instead of six; the caller reads the user
    /// after it commits, and a token that was not active goes on to ``refuse(hash:projectId:event:now:in:)``.
    private func refreshInOneStatement(
        hash: String, projectId: String, nextHash: String, expiresAt: Date, event: (id: String, ip: String?),
        now: Date
    ) async throws -> RefreshOutcome {
        let row = try await database.execute { sql in
            try await sql.raw(
                """
                WITH used AS (
                    UPDATE refresh_tokens SET status = 'used', used_at = \(bind: now.storedValue)
                    WHERE token_hash = \(bind: hash) AND project_id = \(bind: projectId) AND status = 'active'
                      AND expires_at > \(bind: now.storedValue)
                    RETURNING session_id),
                refreshed AS (
                    UPDATE sessions SET refreshed_at = \(bind: now.storedValue),
                        expires_at = \(bind: expiresAt.storedValue)
                    WHERE id = (SELECT session_id FROM used) AND revoked_at IS NULL
                      AND expires_at > \(bind: now.storedValue)
                    RETURNING \(unsafeRaw: Self.columns)),
                next AS (
                    \(Self.nextTokenUnlessUserDisabled(nextHash, sessions: "refreshed", now: now))
                    RETURNING session_id)
                SELECT (SELECT count(*) FROM used) AS used_count, s.*
                FROM (SELECT 1) AS one LEFT JOIN refreshed s ON true
                """
            ).first()
        }
        guard let row, try row.decode(column: "used_count", as: Int.self) > 0 else {
            return try await database.transaction { sql in
                try await Self.refuse(hash: hash, projectId: projectId, event: event, now: now, in: sql)
            }
        }
        guard try row.decode(column: "id", as: String?.self) != nil else { return .invalid }
        return .rotated(try Self.session(from: row))
    }

    /// Why a token that is not active was presented: reuse of a used one revokes its family.
    private static func refuse(
        hash: String, projectId: String, event: (id: String, ip: String?), now: Date, in sql: any SQLDatabase
    ) async throws -> RefreshOutcome {
        guard
            let row = try await sql.raw(
                """
                SELECT session_id, status FROM refresh_tokens
                WHERE token_hash = \(bind: hash) AND project_id = \(bind: projectId)
                """
            ).first(),
            try row.decode(column: "status", as: String.self) == "used"
        else { return .invalid }
        let sessionId = try row.decode(column: "session_id", as: String.self)
        try await revoke(sessionId: sessionId, reason: "refresh_token_reused", now: now, in: sql)
        guard
            let session = try await sql.raw(
                "SELECT \(unsafeRaw: columns) FROM sessions WHERE id = \(bind: sessionId)"
            ).first().map(session(from:))
        else { return .invalid }
        try await sql.raw(
            """
            INSERT INTO security_events (id, project_id, user_id, session_id, type, ip_address, created_at)
            VALUES (\(bind: event.id), \(bind: projectId), \(bind: session.userId), \(bind: sessionId),
                    'refresh_token_reused', \(bind: event.ip), \(bind: now.storedValue))
            """
        ).run()
        return .reused(session)
    }

    /// An unrevoked, unexpired session.
    func activeSession(id: String, projectId: String, now: Date) async throws -> SessionRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM sessions
                WHERE id = \(bind: id) AND project_id = \(bind: projectId) AND revoked_at IS NULL
                  AND expires_at > \(bind: now.storedValue)
                """
            ).first().map(Self.session(from:))
        }
    }

    /// A session as the console lists it: the record and when it was last refreshed.
    struct Listed: Sendable, Equatable {
        var session: SessionRecord
        var refreshedAt: Date
    }

    /// Up to `limit` of a user's unrevoked, unexpired sessions, newest first.
    func activeSessions(userId: String, projectId: String, now: Date, limit: Int) async throws -> [Listed] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns), refreshed_at FROM sessions
                WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) AND revoked_at IS NULL
                  AND expires_at > \(bind: now.storedValue)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map { row in Listed(session: try Self.session(from: row), refreshedAt: try row.date("refreshed_at"))
            }
        }
    }

    /// The unrevoked, unexpired session whose active (unused, unexpired) refresh token has hash `refreshHash`.
    func activeSession(refreshHash: String, projectId: String, now: Date) async throws -> SessionRecord? {
        try await database.lookupConfirmingMiss { sql in
            try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM sessions
                WHERE id = (SELECT session_id FROM refresh_tokens
                            WHERE token_hash = \(bind: refreshHash) AND project_id = \(bind: projectId)
                              AND status = 'active' AND expires_at > \(bind: now.storedValue))
                  AND revoked_at IS NULL AND expires_at > \(bind: now.storedValue)
                """
            ).first().map(Self.session(from:))
        }
    }

    /// Records a proven second factor on an active session, and its claims from now on, and adds the refresh token
    /// `addingRefreshHash` hashes to it, all or nothing (in `work` when given); nil when the session is gone.
    func stepUp(
        id: String, amr: [String], acr: String?, claims: [String: JSONValue], addingRefreshHash: String? = nil,
        now: Date, in work: UnitOfWork? = nil
    ) async throws -> SessionRecord? {
        let encoded = try Self.encode(amr)
        let encodedClaims = try Self.encode(claims: claims)
        let update: @Sendable (any SQLDatabase) async throws -> SessionRecord? = { sql in
            try await sql.raw(
                """
                UPDATE sessions SET amr = \(bind: encoded), acr = \(bind: acr), auth_time = \(bind: now.storedValue),
                    claims = \(bind: encodedClaims)
                WHERE id = \(bind: id) AND revoked_at IS NULL AND expires_at > \(bind: now.storedValue)
                RETURNING \(unsafeRaw: Self.columns)
                """
            ).first().map(Self.session(from:))
        }
        guard let addingRefreshHash else { return try await database.execute(in: work, update) }
        return try await database.transaction(in: work) { sql in
            guard let session = try await update(sql) else { return nil }
            try await Self.insertToken(addingRefreshHash, session: session, now: now, in: sql)
            return session
        }
    }

    /// Revokes the session a refresh token belongs to (logout); false when the token is unknown.
    func revoke(refreshHash: String, projectId: String, now: Date) async throws -> Bool {
        try await database.transaction { sql in
            guard
                let sessionId = try await sql.raw(
                    """
                    SELECT session_id FROM refresh_tokens
                    WHERE token_hash = \(bind: refreshHash) AND project_id = \(bind: projectId)
                    """
                ).first(decodingColumn: "session_id", as: String.self)
            else { return false }
            try await Self.revoke(sessionId: sessionId, reason: "logout", now: now, in: sql)
            return true
        }
    }

    /// Revokes one session by its id (logout with the session token).
    func revoke(sessionId: String, now: Date) async throws {
        try await database.transaction { sql in
            try await Self.revoke(sessionId: sessionId, reason: "logout", now: now, in: sql)
        }
    }

    /// Revokes every session of a user and their refresh tokens, for `reason` (in `work` when given).
    func revokeAll(userId: String, projectId: String, reason: String, now: Date, in work: UnitOfWork? = nil)
        async throws
    {
        try await database.transaction(in: work) { sql in
            try await Self.revokeAll(userId: userId, projectId: projectId, reason: reason, now: now, in: sql)
        }
    }

    static func revokeAll(userId: String, projectId: String, reason: String, now: Date, in sql: any SQLDatabase)
        async throws
    {
        try await sql.raw(
            """
            UPDATE refresh_tokens SET status = 'revoked'
            WHERE status = 'active' AND session_id IN (
                SELECT id FROM sessions WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId))
            """
        ).run()
        try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now.storedValue), revoke_reason = \(bind: reason)
            WHERE project_id = \(bind: projectId) AND user_id = \(bind: userId) AND revoked_at IS NULL
            """
        ).run()
    }

    /// A project's security events, newest first, optionally only one user's.
    func securityEvents(projectId: String, userId: String?, limit: Int) async throws -> [SecurityEvent] {
        try await database.lookup { sql in
            let filter: SQLQueryString = userId.map { "AND user_id = \(bind: $0)" } ?? ""
            return try await sql.raw(
                """
                SELECT id, type, user_id, session_id, ip_address, created_at, factor_id, challenge_id
                FROM security_events
                WHERE project_id = \(bind: projectId) \(filter)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map { row in
                SecurityEvent(
                    id: try row.decode(column: "id", as: String.self),
                    type: try row.decode(column: "type", as: String.self),
                    userId: try row.decode(column: "user_id", as: String.self),
                    sessionId: try row.decode(column: "session_id", as: String?.self),
                    ipAddress: try row.decode(column: "ip_address", as: String?.self),
                    createdAt: try row.date("created_at"),
                    factorId: try row.decode(column: "factor_id", as: String?.self),
                    challengeId: try row.decode(column: "challenge_id", as: String?.self))
            }
        }
    }

    /// Deletes sessions (and their refresh tokens) that expired or were revoked before `cutoff`; their tokens can
    /// no longer be used, so there is nothing left to recognise.
    func purge(before cutoff: Date) async throws {
        try await database.execute { sql in
            try await sql.raw(
                """
                DELETE FROM sessions
                WHERE expires_at < \(bind: cutoff.storedValue) OR revoked_at < \(bind: cutoff.storedValue)
                """
            ).run()
        }
    }

    // MARK: - Helpers

    private static func revoke(sessionId: String, reason: String, now: Date, in sql: any SQLDatabase) async throws {
        try await sql.raw(
            "UPDATE refresh_tokens SET status = 'revoked' WHERE session_id = \(bind: sessionId) AND status = 'active'"
        ).run()
        try await sql.raw(
            """
            UPDATE sessions SET revoked_at = \(bind: now.storedValue), revoke_reason = \(bind: reason)
            WHERE id = \(bind: sessionId) AND revoked_at IS NULL
            """
        ).run()
    }

    private static func insertToken(_ hash: String, session: SessionRecord, now: Date, in sql: any SQLDatabase)
        async throws
    {
        try await sql.raw(
            """
            INSERT INTO refresh_tokens (token_hash, session_id, project_id, status, created_at, expires_at)
            VALUES (\(bind: hash), \(bind: session.id), \(bind: session.projectId), 'active', \(bind: now.storedValue),
                    \(bind: session.expiresAt.storedValue))
            """
        ).run()
    }

    private static func encode(_ amr: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(amr), as: UTF8.self)
    }

    /// A session's claims as stored: NULL for none, as in every session from before they existed.
    private static func encode(claims: [String: JSONValue]) throws -> String? {
        claims.isEmpty ? nil : try storedJSON(claims)
    }

    private static func session(from row: any SQLRow) throws -> SessionRecord {
        let amrText = try row.decode(column: "amr", as: String.self)
        guard let amr = try? JSONDecoder().decode([String].self, from: Data(amrText.utf8)) else {
            throw StoreError.corruptValue(column: "sessions.amr")
        }
        return SessionRecord(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self), amr: amr,
            acr: try row.decode(column: "acr", as: String?.self), authTime: try row.date("auth_time"),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            revokedAt: try row.optionalDate("revoked_at"),
            claims: try row.json("claims", as: [String: JSONValue].self) ?? [:])
    }
}
