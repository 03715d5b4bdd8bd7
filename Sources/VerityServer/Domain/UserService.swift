import Foundation
import Logging
import VerityCore

/// The rules of a project's users: login ids, names, custom claims, the disabled flag. The admin API and
/// `verity admin user` both go through it.
public struct UserService: Sendable, UsesRuntime {
    /// The largest custom-claims object, in bytes of compact JSON.
    public static let maxClaimsBytes = 4096
    /// The longest display name, in characters.
    public static let maxDisplayNameLength = 200
    /// The largest page of users.
    public static let maxPageSize = 100

    private let store: UserStore
    let runtime: Runtime

    init(store: UserStore, runtime: Runtime) {
        self.store = store
        self.runtime = runtime
    }

    /// Runs `body` as one unit of work: a change of a user with what the caller joins to it (roles, status,
    /// sessions) commits together or not at all.
    func unitOfWork<T: Sendable>(_ body: @Sendable (UnitOfWork) async throws -> T) async throws -> T {
        try await store.unitOfWork(body)
    }

    /// Creates a user.
    public func create(_ request: CreateUserRequest, in project: Project) async throws -> User {
        try await create(request, in: project, in: nil)
    }

    /// Creates a user, in `work` when given.
    func create(_ request: CreateUserRequest, in project: Project, in work: UnitOfWork?) async throws -> User {
        let logins = try UserLogins(request.loginIds)
        let user = User(
            id: identifiers.make("usr"), loginIds: logins.ids,
            displayName: try Self.validDisplayName(request.displayName),
            customClaims: try Self.validClaims(request.customClaims ?? [:]), createdAt: clock.now())
        do {
            try await store.insert(user, logins: logins, projectId: project.id, in: work)
        } catch UserStore.WriteError.loginIdTaken {
            throw Self.taken
        }
        logger.info("User created", metadata: ["user": "\(user.id)", "project": "\(project.id)"])
        return user
    }

    /// Creates a user with no login ids, in `work`: one that a face names by its own identity (a Twilio entity) and
    /// that signs in only through that face's factors.
    func createWithoutLogins(displayName: String?, in project: Project, in work: UnitOfWork) async throws -> User {
        let user = User(
            id: identifiers.make("usr"), loginIds: [], displayName: try Self.validDisplayName(displayName),
            customClaims: [:], createdAt: clock.now())
        try await store.insert(user, logins: .none, projectId: project.id, in: work)
        logger.info("User created", metadata: ["user": "\(user.id)", "project": "\(project.id)"])
        return user
    }

    /// One user, by its `usr_…` id.
    public func user(id: String, in project: Project) async throws -> User {
        guard id.hasPrefix("usr_"), let user = try await store.user(id: id, projectId: project.id) else {
            throw Self.notFound(id)
        }
        return user
    }

    /// The user a sign-in with the login key `loginKey` is for, as `work` sees it: the one holding it, with its roles,
    /// or `newUser` (holding `logins`) inserted now, which is `firstSeen`.
    func signingIn(loginKey: String, newUser: User, logins: UserLogins, projectId: String, in work: UnitOfWork)
        async throws -> (user: User, firstSeen: Bool)
    {
        if let user = try await store.user(loginKey: loginKey, projectId: projectId, in: work) {
            return (user, false)
        }
        try await store.insert(newUser, logins: logins, projectId: projectId, in: work)
        return (newUser, true)
    }

    /// Records that the user `id` signed in at `now`, in the sign-in's unit of work.
    func recordSignIn(id: String, now: Date, in work: UnitOfWork) async throws {
        try await store.recordSignIn(id: id, now: now, in: work)
    }

    /// The user with its role names filled in, as `work` sees them (a sign-in that read the user's row itself).
    func withRoles(_ user: User, in work: UnitOfWork) async throws -> User {
        try await store.withRoles(user, in: work)
    }

    /// The user `id`, or nil when the project has none (a session naming a deleted user).
    func findUser(id: String, in project: Project) async throws -> User? {
        try await store.user(id: id, projectId: project.id)
    }

    /// The user `id` as `work` sees it, or nil.
    func findUser(id: String, in project: Project, in work: UnitOfWork) async throws -> User? {
        try await store.user(id: id, projectId: project.id, in: work)
    }

    /// The user holding `loginId` (compared by ``UserLogins/key(for:)``), or nil; `invalid_login_id` when it is
    /// neither an email address nor an E.164 number.
    func findUser(loginId: String, in project: Project) async throws -> User? {
        try await store.user(loginKey: try UserLogins.key(for: loginId), projectId: project.id)
    }

    /// Whether the user holding the login id with canonical key `loginKey` is disabled (false when nobody holds
    /// it).
    func isDisabled(loginKey: String, in project: Project) async throws -> Bool {
        try await store.user(loginKey: loginKey, projectId: project.id)?.disabled ?? false
    }

    /// A page of users, newest first; with `loginId`, only the user holding exactly that login id (after
    /// normalisation, emails compared without regard to case).
    public func list(loginId: String? = nil, limit: Int? = nil, cursor: String? = nil, in project: Project)
        async throws -> Page<User>
    {
        let limit = try Paging.limit(limit, max: Self.maxPageSize)
        if let loginId {
            let found = try await findUser(loginId: loginId, in: project)
            return Page<User>(items: found.map { [$0] } ?? [])
        }
        let after = try cursor.map(Self.decodeCursor)
        // One more than asked tells whether there is a next page.
        let users = try await store.users(projectId: project.id, after: after, limit: limit + 1)
        return Page(fetched: users, limit: limit, cursor: Self.encodeCursor)
    }

    /// Changes what the request names; an absent field stays as it is.
    public func update(id: String, _ request: UpdateUserRequest, in project: Project) async throws -> User {
        try await update(id: id, request, in: project, in: nil)
    }

    /// Changes what the request names, in `work` when given.
    func update(id: String, _ request: UpdateUserRequest, in project: Project, in work: UnitOfWork?) async throws
        -> User
    {
        guard id.hasPrefix("usr_") else { throw Self.notFound(id) }
        let logins = try request.loginIds.map(UserLogins.init)
        let claims = try request.customClaims.map(Self.validClaims)
        let displayName: String?? = try request.displayName.map { try Self.validDisplayName($0) }
        let updated: User?
        do {
            updated = try await store.update(
                id: id, projectId: project.id, displayName: displayName, customClaims: claims, logins: logins,
                in: work)
        } catch UserStore.WriteError.loginIdTaken {
            throw Self.taken
        }
        guard let updated else { throw Self.notFound(id) }
        logger.info("User updated", metadata: ["user": "\(id)", "project": "\(project.id)"])
        return updated
    }

    /// Makes a proven address `user`'s login id of its kind, adding it or replacing the one of that kind (a user has
    /// at most one email address and one phone number), as part of `work`. A login id of another user is refused
    /// (`login_id_taken`) and nothing changes.
    func replaceLogin(_ destination: Destination, of user: User, in work: UnitOfWork? = nil, in project: Project)
        async throws -> User
    {
        let isPhone = if case .phone = destination { true } else { false }
        let kept = user.loginIds.filter { Destination.channel(ofLoginId: $0).reachesPhone != isPhone }
        let logins = try UserLogins(kept + [destination.value])
        let updated: User?
        do {
            updated = try await store.update(
                id: user.id, projectId: project.id, displayName: nil, customClaims: nil, logins: logins, in: work)
        } catch UserStore.WriteError.loginIdTaken {
            throw Self.taken
        }
        guard let updated else { throw Self.notFound(user.id) }
        logger.info("User login id replaced", metadata: ["user": "\(user.id)", "project": "\(project.id)"])
        return updated
    }

    /// Sets a user's disabled flag in `work`, nothing else; nil when there is no such user. Disabling a user also
    /// ends its sessions: ``UserAccounts/setDisabled(_:id:in:)`` does both.
    func setDisabledFlag(_ disabled: Bool, id: String, projectId: String, in work: UnitOfWork) async throws -> User? {
        guard id.hasPrefix("usr_") else { return nil }
        return try await store.setDisabled(disabled, id: id, projectId: projectId, in: work)
    }

    /// Deletes a user and frees its login ids.
    public func delete(id: String, in project: Project) async throws {
        try await delete(id: id, in: project, in: nil)
    }

    /// Deletes a user, in `work` when given; what belongs to them (passkeys, sessions) goes with them.
    func delete(id: String, in project: Project, in work: UnitOfWork?) async throws {
        guard id.hasPrefix("usr_"), try await store.delete(id: id, projectId: project.id, in: work) else {
            throw Self.notFound(id)
        }
        logger.info("User deleted", metadata: ["user": "\(id)", "project": "\(project.id)"])
    }

    // MARK: - Validation

    static func validDisplayName(_ name: String?) throws -> String? {
        guard let name else { return nil }
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.unicodeScalars.count <= maxDisplayNameLength else {
            throw VerityError(.invalidRequest, "`displayName` may have at most \(maxDisplayNameLength) characters.")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw VerityError(.invalidRequest, "`displayName` may not contain control characters.")
        }
        return trimmed.isEmpty ? nil : trimmed
    }

    static func validClaims(_ claims: [String: JSONValue]) throws -> [String: JSONValue] {
        for key in claims.keys {
            guard (1...100).contains(key.unicodeScalars.count) else {
                throw VerityError(.invalidClaims, "Custom claim names must be 1 to 100 characters.")
            }
            guard !SessionClaimNames.reserved.contains(key) else {
                throw VerityError(
                    .invalidClaims,
                    "`\(key)` is a registered claim the session sets itself; custom claims may not use "
                        + SessionClaimNames.reserved.sorted().joined(separator: ", ") + ".")
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let size = try? encoder.encode(claims).count, size <= maxClaimsBytes else {
            throw VerityError(.invalidClaims, "Custom claims may take at most \(maxClaimsBytes) bytes as JSON.")
        }
        return claims
    }

    // MARK: - Cursors

    /// `createdAt` (its exact bits) and id of the last user of a page, base64url: opaque to clients.
    static func encodeCursor(_ user: User) -> String {
        let bits = String(user.createdAt.timeIntervalSince1970.bitPattern, radix: 16)
        return Base64URL.encode(Array("\(bits):\(user.id)".utf8))
    }

    static func decodeCursor(_ cursor: String) throws -> UserCursor {
        let invalid = VerityError(.invalidRequest, "`cursor` is not a cursor this server gave out.")
        guard cursor.count <= 200, let bytes = Base64URL.decode(cursor) else { throw invalid }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let bits = UInt64(parts[0], radix: 16), parts[1].hasPrefix("usr_") else {
            throw invalid
        }
        let createdAt = Double(bitPattern: bits)
        guard createdAt.isFinite else { throw invalid }
        return UserCursor(createdAt: createdAt, id: String(parts[1]))
    }

    // MARK: - Errors

    private static let taken = VerityError(.loginIdTaken, "A login id already belongs to another user of this project.")

    static func notFound(_ id: String) -> VerityError {
        VerityError(.userNotFound, "No user \(id) in this project.")
    }
}
