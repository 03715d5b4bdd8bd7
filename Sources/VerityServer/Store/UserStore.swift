import Foundation
import SQLKit
import VerityCore

/// Users and the index that keeps their login ids unique within a project.
struct UserStore: Sendable {
    let database: Database

    /// Why a write was not made.
    enum WriteError: Error {
        /// A login id (by its key) belongs to another user of the project.
        case loginIdTaken
    }

    /// Runs `body` as one unit of work: a user's change with what the caller joins to it.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await database.unitOfWork(body)
    }

    /// Inserts a user with its login ids, all or nothing (in `work` when given); throws ``WriteError/loginIdTaken``
    /// when one is taken.
    func insert(_ user: User, logins: UserLogins, projectId: String, in work: UnitOfWork? = nil) async throws {
        try await database.transaction(in: work) { sql in
            try await Self.insert(user, logins: logins, projectId: projectId, in: sql)
        }
    }

    /// Inserts a user inside the caller's transaction.
    private static func insert(_ user: User, logins: UserLogins, projectId: String, in sql: any SQLDatabase)
        async throws
    {
        try await sql.raw(
            """
            INSERT INTO users (id, project_id, email, phone, display_name, custom_claims, disabled, created_at,
                               last_sign_in_at)
            VALUES (\(bind: user.id), \(bind: projectId), \(bind: logins.email), \(bind: logins.phone),
                    \(bind: user.displayName), \(bind: try Self.encodedClaims(user.customClaims)),
                    \(bind: user.disabled ? 1 : 0), \(bind: user.createdAt.storedValue),
                    \(bind: user.lastSignInAt?.storedValue))
            """
        ).run()
        try await claim(logins.keys, userId: user.id, projectId: projectId, in: sql)
    }

    func user(id: String, projectId: String) async throws -> User? {
        try await database.lookupConfirmingMiss { sql in try await Self.user(id: id, projectId: projectId, in: sql) }
    }

    /// The user `id` as `work` sees it.
    func user(id: String, projectId: String, in work: UnitOfWork) async throws -> User? {
        try await database.execute(in: work) { sql in try await Self.user(id: id, projectId: projectId, in: sql) }
    }

    private static func user(id: String, projectId: String, in sql: any SQLDatabase) async throws -> User? {
        try await withRoles(
            sql.raw(
                "SELECT \(unsafeRaw: User.columns) FROM users WHERE id = \(bind: id) AND project_id = \(bind: projectId)"
            ).first().map(User.init(row:)), in: sql)
    }

    /// The user holding a login id (by its key), if any.
    func user(loginKey: String, projectId: String) async throws -> User? {
        try await database.lookup { sql in try await Self.user(loginKey: loginKey, projectId: projectId, in: sql) }
    }

    /// The user holding a login id (by its key) as `work` sees it.
    func user(loginKey: String, projectId: String, in work: UnitOfWork) async throws -> User? {
        try await Self.user(loginKey: loginKey, projectId: projectId, in: work.sql)
    }

    /// Records that the user signed in at `now`, in `work` (with the session the sign-in opens).
    func recordSignIn(id: String, now: Date, in work: UnitOfWork) async throws {
        try await work.sql.raw("UPDATE users SET last_sign_in_at = \(bind: now.storedValue) WHERE id = \(bind: id)")
            .run()
    }

    /// The user with its role names filled in, as `work` sees them.
    func withRoles(_ user: User, in work: UnitOfWork) async throws -> User {
        try await Self.withRoles([user], in: work.sql).first ?? user
    }

    private static func user(loginKey: String, projectId: String, in sql: any SQLDatabase) async throws -> User? {
        try await withRoles(
            sql.raw(
                """
                SELECT \(unsafeRaw: User.columns) FROM users
                WHERE project_id = \(bind: projectId) AND id = (
                    SELECT user_id FROM user_login_ids
                    WHERE project_id = \(bind: projectId) AND login_key = \(bind: loginKey))
                """
            ).first().map(User.init(row:)), in: sql)
    }

    /// Up to `limit` users, newest first (ties broken by id, descending), after the position `after`.
    func users(projectId: String, after: UserCursor?, limit: Int) async throws -> [User] {
        try await database.lookup { sql in
            if let after {
                let users = try await sql.raw(
                    """
                    SELECT \(unsafeRaw: User.columns) FROM users
                    WHERE project_id = \(bind: projectId)
                      AND (created_at < \(bind: after.createdAt)
                           OR (created_at = \(bind: after.createdAt) AND id < \(bind: after.id)))
                    ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                    """
                ).all().map(User.init(row:))
                return try await Self.withRoles(users, in: sql)
            }
            let users = try await sql.raw(
                """
                SELECT \(unsafeRaw: User.columns) FROM users WHERE project_id = \(bind: projectId)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(User.init(row:))
            return try await Self.withRoles(users, in: sql)
        }
    }

    /// Changes a user's name and claims (nil leaves them) and, when `logins` is given, replaces its login ids, all
    /// or nothing (in `work` when given). Nil when there is no such user; throws ``WriteError/loginIdTaken`` when a login id is taken.
    func update(
        id: String, projectId: String, displayName: String??, customClaims: [String: JSONValue]?,
        logins: UserLogins?, in work: UnitOfWork? = nil
    ) async throws -> User? {
        let claims = try customClaims.map(Self.encodedClaims)
        return try await database.transaction(in: work) { sql in
            // Touching the row first locks it (PostgreSQL), so concurrent updates of one user take turns.
            guard
                let current = try await sql.raw(
                    """
                    UPDATE users SET custom_claims = COALESCE(\(bind: claims), custom_claims)
                    WHERE id = \(bind: id) AND project_id = \(bind: projectId)
                    RETURNING \(unsafeRaw: User.columns)
                    """
                ).first().map(User.init(row:))
            else { return nil }
            if let displayName {
                try await sql.raw(
                    "UPDATE users SET display_name = \(bind: displayName) WHERE id = \(bind: id)"
                ).run()
            }
            if let logins {
                try await sql.raw(
                    """
                    UPDATE users SET email = \(bind: logins.email), phone = \(bind: logins.phone)
                    WHERE id = \(bind: id)
                    """
                ).run()
                try await sql.raw(
                    """
                    DELETE FROM user_login_ids WHERE project_id = \(bind: projectId) AND user_id = \(bind: id)
                    """
                ).run()
                try await Self.claim(logins.keys, userId: id, projectId: projectId, in: sql)
            }
            guard displayName != nil || logins != nil else { return try await Self.withRoles(current, in: sql) }
            return try await Self.user(id: id, projectId: projectId, in: sql)
        }
    }

    /// Sets the disabled flag in `work`; nil when there is no such user.
    func setDisabled(_ disabled: Bool, id: String, projectId: String, in work: UnitOfWork) async throws -> User? {
        try await database.execute(in: work) { sql in
            guard
                let user = try await sql.raw(
                    """
                    UPDATE users SET disabled = \(bind: disabled ? 1 : 0)
                    WHERE id = \(bind: id) AND project_id = \(bind: projectId)
                    RETURNING \(unsafeRaw: User.columns)
                    """
                ).first().map(User.init(row:))
            else { return nil }
            return try await Self.withRoles(user, in: sql)
        }
    }

    /// Deletes a user and its login ids; false when there was no such user.
    func delete(id: String, projectId: String, in work: UnitOfWork? = nil) async throws -> Bool {
        try await database.transaction(in: work) { sql in
            try await sql.raw(
                "DELETE FROM user_login_ids WHERE project_id = \(bind: projectId) AND user_id = \(bind: id)"
            ).run()
            return try await sql.raw(
                "DELETE FROM users WHERE id = \(bind: id) AND project_id = \(bind: projectId) RETURNING id"
            ).first() != nil
        }
    }

    // MARK: - Helpers

    /// The users with their role names filled in.
    private static func withRoles(_ users: [User], in sql: any SQLDatabase) async throws -> [User] {
        guard !users.isEmpty else { return users }
        let ids = SQLList(users.map { SQLBind($0.id) })
        var roles: [String: [String]] = [:]
        for row in try await sql.raw(
            "SELECT user_id, role_name FROM user_roles WHERE user_id IN (\(ids)) ORDER BY role_name"
        ).all() {
            roles[try row.decode(column: "user_id", as: String.self), default: []].append(
                try row.decode(column: "role_name", as: String.self))
        }
        return users.map { user in
            var user = user
            user.roles = roles[user.id] ?? []
            return user
        }
    }

    private static func withRoles(_ user: User?, in sql: any SQLDatabase) async throws -> User? {
        guard let user else { return nil }
        return try await withRoles([user], in: sql).first
    }

    /// Takes each login key for the user; a key held by someone else aborts the transaction.
    private static func claim(_ keys: [String], userId: String, projectId: String, in sql: any SQLDatabase)
        async throws
    {
        for key in keys {
            // DO NOTHING rather than a failing insert: a PostgreSQL transaction survives it, and the answer is the
            // same on both engines.
            guard
                try await sql.raw(
                    """
                    INSERT INTO user_login_ids (project_id, login_key, user_id)
                    VALUES (\(bind: projectId), \(bind: key), \(bind: userId))
                    ON CONFLICT (project_id, login_key) DO NOTHING
                    RETURNING login_key
                    """
                ).first() != nil
            else { throw WriteError.loginIdTaken }
        }
    }

    private static func encodedClaims(_ claims: [String: JSONValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(claims), as: UTF8.self)
    }
}
