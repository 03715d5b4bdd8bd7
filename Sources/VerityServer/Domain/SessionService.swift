import Foundation
import Logging
import VerityCore

/// The rules of sessions: what a session token says, how refresh tokens rotate, how a bearer token is checked.
///
/// A session token is an ES256 JWT signed with the project's current key (see ``SigningKeyService``); it lives for
/// the project's `sessionLifetime`. A refresh token is `vrt_` and 256 random bits; only its SHA-256 is stored. Each
/// refresh kills the presented token and issues the next; a killed token presented again revokes the session.
struct SessionService: Sendable, UsesRuntime {
    /// Clock difference tolerated when checking a session token's expiry.
    static let leeway: TimeInterval = 5

    private let store: SessionStore
    let users: UserService
    let roles: RoleService
    let signingKeys: SigningKeyService
    let publicURL: String
    let runtime: Runtime

    init(
        store: SessionStore, users: UserService, roles: RoleService, signingKeys: SigningKeyService,
        publicURL: String, runtime: Runtime
    ) {
        self.store = store
        self.users = users
        self.roles = roles
        self.signingKeys = signingKeys
        self.publicURL = publicURL
        self.runtime = runtime
    }

    /// The `iss` of a project's session tokens.
    func issuer(projectId: String) -> String {
        "\(publicURL)/v1/projects/\(projectId)"
    }

    /// Signs in the user holding `logins` (creating them if needed) and opens a session proven by `amr`; its token
    /// is worded in `dialect` (Verity's when nil).
    func signIn(_ logins: UserLogins, amr: [String], dialect: SessionTokenDialect? = nil, in project: Project)
        async throws -> AuthResponse
    {
        try await answer(try await open(logins, amr: amr, in: project), dialect: dialect, in: project)
    }

    /// A sign-in that is written but not answered yet: the first half of ``signIn(_:amr:dialect:in:)``.
    struct OpenedSession: Sendable {
        var session: SessionRecord
        var user: User
        var refreshToken: String
        var firstSeen: Bool
        var now: Date
    }

    /// Writes a sign-in (the user if new, the session, its first refresh token), in the caller's unit of work when
    /// one is given, so that what proved the sign-in (an approved code) commits with it or not at all. Throws
    /// `userDisabled` when the user is disabled. Answer it with ``answer(_:dialect:in:)`` once the work commits.
    ///
    /// - Parameter claims: Claims every token of the session carries (checked by ``validSessionClaims(_:dialect:)``
    ///   when the client asked for them).
    func open(
        _ logins: UserLogins, amr: [String], claims: [String: JSONValue] = [:], in project: Project,
        in work: UnitOfWork? = nil
    ) async throws -> OpenedSession {
        let now = clock.now()
        guard let loginKey = logins.keys.first else { throw VerityError(.invalidLoginId) }
        let newUser = User(id: identifiers.make("usr"), loginIds: logins.ids, createdAt: now)
        var session = SessionRecord(
            id: identifiers.make("ses"), projectId: project.id, userId: newUser.id, amr: amr, acr: nil,
            authTime: now, createdAt: now, expiresAt: now.addingTimeInterval(project.refreshLifetime), claims: claims)
        let refreshToken = newRefreshToken()
        let refreshHash = SecretHash.hex(refreshToken)
        let opening = session
        let outcome = try await store.unitOfWork(in: work) { work -> SessionStore.SignInOutcome in
            switch try await store.signInKnownUser(
                loginKey: loginKey, session: opening, refreshHash: refreshHash, now: now, in: work)
            {
            case .signedIn(let user, _)?: return .signedIn(try await users.withRoles(user, in: work), firstSeen: false)
            case .userDisabled?: return .userDisabled
            case nil: break
            }
            var (user, firstSeen) = try await users.signingIn(
                loginKey: loginKey, newUser: newUser, logins: logins, projectId: project.id, in: work)
            guard !user.disabled else { return .userDisabled }
            try await users.recordSignIn(id: user.id, now: now, in: work)
            user.lastSignInAt = now
            var session = opening
            session.userId = user.id
            try await store.open(session, refreshHash: refreshHash, now: now, in: work)
            return .signedIn(user, firstSeen: firstSeen)
        }
        switch outcome {
        case .userDisabled:
            throw Self.disabled
        case .signedIn(let user, let firstSeen):
            session.userId = user.id
            return OpenedSession(
                session: session, user: user, refreshToken: refreshToken, firstSeen: firstSeen, now: now)
        }
    }

    /// Writes a sign-in of the known user `userId`, proven without a login id (a passkey names its user): the session
    /// with `amr` and `acr` and its first refresh token, in the caller's unit of work when one is given, so that what
    /// proved the sign-in commits with it or not at all. Throws `userDisabled` when the user is disabled. Answer it
    /// with ``answer(_:dialect:in:)`` once the work commits.
    ///
    /// - Parameter claims: Claims every token of the session carries (checked by ``requestedClaims(_:dialect:)``
    ///   when the client asked for them).
    func open(
        userId: String, amr: [String], acr: String?, claims: [String: JSONValue] = [:], in project: Project,
        in work: UnitOfWork? = nil
    ) async throws -> OpenedSession {
        let now = clock.now()
        let session = SessionRecord(
            id: identifiers.make("ses"), projectId: project.id, userId: userId, amr: amr, acr: acr, authTime: now,
            createdAt: now, expiresAt: now.addingTimeInterval(project.refreshLifetime), claims: claims)
        let refreshToken = newRefreshToken()
        let user = try await store.unitOfWork(in: work) { work in
            guard var user = try await users.findUser(id: userId, in: project, in: work) else {
                throw UserService.notFound(userId)
            }
            guard !user.disabled else { throw Self.disabled }
            try await users.recordSignIn(id: user.id, now: now, in: work)
            user.lastSignInAt = now
            try await store.open(session, refreshHash: SecretHash.hex(refreshToken), now: now, in: work)
            return user
        }
        return OpenedSession(session: session, user: user, refreshToken: refreshToken, firstSeen: false, now: now)
    }

    /// The answer to a committed sign-in: its session token (worded in `dialect`) and refresh token.
    func answer(_ opened: OpenedSession, dialect: SessionTokenDialect? = nil, in project: Project) async throws
        -> AuthResponse
    {
        metrics.session(opened.firstSeen ? .signUp : .signIn)
        logger.info(
            opened.firstSeen ? "User signed up" : "User signed in",
            metadata: ["user": "\(opened.user.id)", "session": "\(opened.session.id)", "project": "\(project.id)"])
        return try await response(
            session: opened.session, user: opened.user, refreshToken: opened.refreshToken,
            firstSeen: opened.firstSeen, dialect: dialect, in: project, now: opened.now)
    }

    /// Rotates a refresh token: the presented one dies, the answer carries the next.
    func refresh(
        _ presented: String, clientAddress: String?, dialect: SessionTokenDialect? = nil, in project: Project
    ) async throws -> AuthResponse {
        let token = try await refreshToken(presented, dialect: dialect, in: project)
        guard Self.isWellFormed(token) else { throw Self.invalidRefreshToken }
        let now = clock.now()
        let next = newRefreshToken()
        switch try await store.refresh(
            hash: SecretHash.hex(token), projectId: project.id, nextHash: SecretHash.hex(next),
            expiresAt: now.addingTimeInterval(project.refreshLifetime),
            event: (identifiers.make("sev"), clientAddress), now: now)
        {
        case .rotated(let session):
            // Read after the rotation commits: a disabled user's session slid but got no next token.
            guard let user = try await users.findUser(id: session.userId, in: project) else {
                throw Self.invalidRefreshToken
            }
            guard !user.disabled else { throw Self.disabled }
            metrics.session(.refresh)
            return try await response(
                session: session, user: user, refreshToken: next, firstSeen: false, dialect: dialect, in: project,
                now: now)
        case .reused(let session):
            metrics.session(.refreshTokenReused)
            logger.warning(
                "Security event: a used refresh token was presented again; its session is revoked",
                metadata: [
                    "event": "refresh_token_reused", "user": "\(session.userId)", "session": "\(session.id)",
                    "project": "\(project.id)", "client": "\(clientAddress ?? "unknown")",
                ])
            throw VerityError(
                .refreshTokenReused,
                "This refresh token was used before, so it may have been copied; the session is revoked. Sign in again."
            )
        case .invalid:
            throw Self.invalidRefreshToken
        }
    }

    /// Ends the session a refresh token belongs to. Unknown tokens are ignored (logging out twice is fine); a
    /// wrapped one (see ``SessionTokenDialect/refreshTokenClaims``) must be the server's.
    func logout(_ presented: String, dialect: SessionTokenDialect? = nil, in project: Project) async throws {
        let token = try await refreshToken(presented, dialect: dialect, in: project)
        guard Self.isWellFormed(token) else { return }
        if try await store.revoke(refreshHash: SecretHash.hex(token), projectId: project.id, now: clock.now()) {
            logger.info("Session ended", metadata: ["project": "\(project.id)"])
        }
    }

    /// Ends the session a session token belongs to.
    func logout(_ auth: SessionAuth, in project: Project) async throws {
        try await store.revoke(sessionId: auth.session.id, now: clock.now())
        logger.info("Session ended", metadata: ["session": "\(auth.session.id)", "project": "\(project.id)"])
    }

    /// How long an ended session (and its refresh tokens) is kept, for security-event investigation.
    static let retention: TimeInterval = 7 * 86_400

    /// Deletes sessions that expired or were revoked more than ``retention`` ago.
    func purgeEnded() async throws {
        try await store.purge(before: clock.now().addingTimeInterval(-Self.retention))
    }

    /// Ends every session of the user.
    func logoutAll(_ auth: SessionAuth, in project: Project) async throws {
        try await revokeAll(userId: auth.user.id, in: project)
    }

    /// The signed-in user and their session.
    func me(_ auth: SessionAuth, in project: Project) async throws -> MeResponse {
        MeResponse(
            user: auth.user, permissions: try await roles.permissions(userId: auth.user.id, in: project),
            sessionId: auth.session.id, amr: auth.session.amr, acr: auth.session.acr)
    }

    /// Records a second factor on the session and issues a token that says so; the refresh token stays. `claims`
    /// (checked by ``validSessionClaims(_:dialect:)``) join the session's, a name it had taking the new value.
    ///
    /// - Parameter issuingRefreshToken: Also gives the session one more refresh token, in the same write, for a
    ///   client whose step-up answer must carry one. The session's other refresh tokens stay valid, each used once.
    func stepUp(
        _ auth: SessionAuth, method: String, claims: [String: JSONValue]? = nil, issuingRefreshToken: Bool = false,
        dialect: SessionTokenDialect? = nil, in project: Project
    ) async throws -> AuthResponse {
        let steppedUp = try await recordStepUp(
            auth, methods: [method], claims: claims, issuingRefreshToken: issuingRefreshToken, in: project)
        return try await answer(steppedUp, dialect: dialect, in: project)
    }

    /// A step-up that is written but not answered yet: the first half of
    /// ``stepUp(_:method:claims:issuingRefreshToken:dialect:in:)``.
    struct SteppedUpSession: Sendable {
        var session: SessionRecord
        var user: User
        var refreshToken: String?
        var now: Date
    }

    /// Records the second factor `methods` proved on the session, in the caller's unit of work when one is given, so
    /// that what proved it commits with it or not at all. The session's `acr` becomes `mfa` when the proof was one
    /// (`provenACR`, a passkey with user verification) or when the session now holds two factors. Answer it with
    /// ``answer(_:dialect:in:)`` once the work commits.
    func recordStepUp(
        _ auth: SessionAuth, methods: [String], provenACR: String? = nil, claims: [String: JSONValue]? = nil,
        issuingRefreshToken: Bool = false, in project: Project, in work: UnitOfWork? = nil
    ) async throws -> SteppedUpSession {
        var amr = auth.session.amr
        for method in methods where !amr.contains(method) { amr.append(method) }
        let factors = Set(amr).subtracting(["otp"])
        let now = clock.now()
        let refreshToken = issuingRefreshToken ? newRefreshToken() : nil
        guard
            let session = try await store.stepUp(
                id: auth.session.id, amr: amr, acr: factors.count >= 2 || provenACR == "mfa" ? "mfa" : nil,
                claims: auth.session.claims.merging(claims ?? [:]) { _, new in new },
                addingRefreshHash: refreshToken.map(SecretHash.hex), now: now, in: work)
        else { throw Self.invalidSession }
        return SteppedUpSession(session: session, user: auth.user, refreshToken: refreshToken, now: now)
    }

    /// The answer to a committed step-up: a session token that says so (worded in `dialect`).
    func answer(_ steppedUp: SteppedUpSession, dialect: SessionTokenDialect? = nil, in project: Project) async throws
        -> AuthResponse
    {
        metrics.session(.stepUp)
        logger.info(
            "Session stepped up",
            metadata: [
                "session": "\(steppedUp.session.id)", "amr": "\(steppedUp.session.amr.joined(separator: " "))",
                "project": "\(project.id)",
            ])
        return try await response(
            session: steppedUp.session, user: steppedUp.user, refreshToken: steppedUp.refreshToken, firstSeen: false,
            dialect: dialect, steppedUp: true, in: project, now: steppedUp.now)
    }

    /// A new session token for a session whose user changed (a login id added): the refresh token stays.
    func reissue(_ auth: SessionAuth, dialect: SessionTokenDialect? = nil, in project: Project) async throws
        -> AuthResponse
    {
        try await response(
            session: auth.session, user: auth.user, refreshToken: nil, firstSeen: false, dialect: dialect, in: project,
            now: clock.now())
    }

    /// Checks `Authorization: Bearer <session token>`: signature by one of the project's keys, audience, expiry,
    /// and that the session is not revoked and its user not disabled. A request without a bearer token has no session.
    func authenticate(bearer token: String?, dialect: SessionTokenDialect? = nil, in project: Project) async throws
        -> SessionAuth
    {
        let now = clock.now()
        guard let token, token.utf8.count <= 8192, let jws = try? CompactJWS(parsing: token), jws.header.alg == "ES256",
            let kid = jws.header.kid,
            let publicKey = try await signingKeys.verifyingKey(kid, projectId: project.id),
            jws.isValidSignature(for: publicKey),
            let claims = try? jws.decodePayload(BearerClaims.self),
            claims.aud == dialect?.audience ?? project.id,
            claims.iss == dialect?.issuer ?? issuer(projectId: project.id)
        else { throw Self.invalidSession }
        guard Date(timeIntervalSince1970: claims.exp) > now.addingTimeInterval(-Self.leeway) else {
            throw Self.expiredSession
        }
        guard let session = try await store.activeSession(id: claims.sid, projectId: project.id, now: now),
            session.userId == claims.sub
        else { throw Self.invalidSession }
        return try await sessionAuth(session, in: project)
    }

    /// Checks a refresh token presented to name a session without rotating it (Descope's `me`, `logoutall` and
    /// step-up carry the refresh token, not the session token): it must be the session's active one.
    func authenticate(refreshToken presented: String, dialect: SessionTokenDialect? = nil, in project: Project)
        async throws -> SessionAuth
    {
        let token = try await refreshToken(presented, dialect: dialect, in: project)
        guard Self.isWellFormed(token),
            let session = try await store.activeSession(
                refreshHash: SecretHash.hex(token), projectId: project.id, now: clock.now())
        else { throw Self.invalidRefreshToken }
        return try await sessionAuth(session, in: project)
    }

    /// The active session `id` and its user, for a code bound to that session.
    func authenticate(sessionId: String, in project: Project) async throws -> SessionAuth {
        guard let session = try await store.activeSession(id: sessionId, projectId: project.id, now: clock.now())
        else { throw Self.invalidSession }
        return try await sessionAuth(session, in: project)
    }

    private func sessionAuth(_ session: SessionRecord, in project: Project) async throws -> SessionAuth {
        guard let user = try await users.findUser(id: session.userId, in: project) else { throw Self.invalidSession }
        guard !user.disabled else { throw Self.disabled }
        return SessionAuth(session: session, user: user)
    }

    /// Ends every session of a user: the user's own "sign out everywhere", or the backend's
    /// (firebase-admin's `revoke_refresh_tokens`).
    func revokeAll(userId: String, in project: Project) async throws {
        try await revokeAll(userId: userId, reason: "logout_all", projectId: project.id)
        logger.info("All sessions ended", metadata: ["user": "\(userId)", "project": "\(project.id)"])
    }

    /// Revokes every session of `userId` for `reason` (a security event's type, `user_disabled`), in `work` when
    /// given.
    func revokeAll(userId: String, reason: String, projectId: String, in work: UnitOfWork? = nil) async throws {
        try await store.revokeAll(userId: userId, projectId: projectId, reason: reason, now: clock.now(), in: work)
    }

    /// A user's active (unrevoked, unexpired) sessions, newest first: the latest 50.
    func activeSessions(userId: String, in project: Project) async throws -> [SessionStore.Listed] {
        try await store.activeSessions(
            userId: userId, projectId: project.id, now: clock.now(),
            limit: try Paging.limit(nil, max: UserService.maxPageSize))
    }

    /// A project's security events, newest first.
    func securityEvents(userId: String?, limit: Int?, in project: Project) async throws -> Page<SecurityEvent> {
        let limit = try Paging.limit(limit, max: UserService.maxPageSize)
        return Page(items: try await store.securityEvents(projectId: project.id, userId: userId, limit: limit))
    }

    // MARK: - Tokens

    private func response(
        session: SessionRecord, user: User, refreshToken: String?, firstSeen: Bool,
        dialect: SessionTokenDialect? = nil, steppedUp: Bool = false, in project: Project, now: Date
    ) async throws -> AuthResponse {
        let expiresAt = now.addingTimeInterval(TimeInterval(project.settings.sessionLifetime))
        // The session's claims were chosen by the client, so they never pass for the user's (set by the backend):
        // nested under their own claim in a dialect that has one (Descope's `nsec`), otherwise beside the user's,
        // which win a name both have. The dialect's and the registered claims win over everything.
        var claims = user.customClaims
        if let key = dialect?.sessionClaimsKey, !session.claims.isEmpty {
            claims[key] = .object(session.claims)
        } else {
            claims.merge(session.claims) { users, _ in users }
        }
        if let dialect { claims.merge(dialect.claims(user)) { _, dialects in dialects } }
        claims["iss"] = .string(dialect?.issuer ?? issuer(projectId: project.id))
        claims["aud"] = .string(dialect?.audience ?? project.id)
        claims["sub"] = .string(user.id)
        claims["sid"] = .string(session.id)
        claims["iat"] = .integer(Int64(now.timeIntervalSince1970))
        claims["exp"] = .integer(Int64(expiresAt.timeIntervalSince1970))
        claims["auth_time"] = .integer(Int64(session.authTime.timeIntervalSince1970))
        claims["amr"] = .array(session.amr.map(JSONValue.string))
        claims["acr"] = session.acr.map(JSONValue.string)
        claims["roles"] = .array(user.roles.map(JSONValue.string))
        claims["permissions"] = .array(
            try await roles.permissions(userId: user.id, in: project).map(JSONValue.string))
        var refreshToken = refreshToken
        if let token = refreshToken, let wrapping = dialect?.refreshTokenClaims {
            var refreshClaims = claims.merging(wrapping) { _, dialects in dialects }
            refreshClaims["exp"] = .integer(Int64(session.expiresAt.timeIntervalSince1970))
            refreshClaims[Self.wrappedRefreshClaim] = .string(token)
            refreshToken = try await sign(refreshClaims, in: project)
        }
        if steppedUp, let dialect { claims.merge(dialect.stepUpClaims) { _, dialects in dialects } }
        return AuthResponse(
            sessionJwt: try await sign(claims, in: project), sessionExpiresAt: expiresAt, refreshToken: refreshToken,
            refreshExpiresAt: session.expiresAt, user: user, firstSeen: firstSeen)
    }

    /// Claims a client asks a session to carry: like a user's custom claims (at most 4 KiB of JSON, no registered
    /// claim name) and none of the names `dialect` sets itself, such as Descope's `drn` and `su`, which only the
    /// server may say.
    static func validSessionClaims(_ claims: [String: JSONValue], dialect: SessionTokenDialect?) throws
        -> [String: JSONValue]
    {
        if let dialect, let taken = claims.keys.sorted().first(where: dialect.ownClaimNames.contains) {
            throw VerityError(.invalidClaims, "`\(taken)` is a claim the session sets itself.")
        }
        return try UserService.validClaims(claims)
    }

    /// Claims a client asked a session to carry, checked as ``validSessionClaims(_:dialect:)`` does; nil for none (an
    /// empty object asks for none).
    static func requestedClaims(_ claims: [String: JSONValue]?, dialect: SessionTokenDialect?) throws
        -> [String: JSONValue]?
    {
        guard let claims, !claims.isEmpty else { return nil }
        return try validSessionClaims(claims, dialect: dialect)
    }

    private func sign(_ claims: [String: JSONValue], in project: Project) async throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try await signingKeys.sign(Array(try encoder.encode(claims)), projectId: project.id)
    }

    /// The claim of a wrapped refresh token (``SessionTokenDialect/refreshTokenClaims``) that carries the opaque
    /// token.
    static let wrappedRefreshClaim = "vrt"

    /// The opaque refresh token a client presented: as it is, or taken out of its signed wrapping in a dialect
    /// that wraps refresh tokens, after checking the wrapping's signature and issuer (its expiry and whether it is
    /// still the session's are the opaque token's, checked by the store).
    private func refreshToken(_ presented: String, dialect: SessionTokenDialect?, in project: Project) async throws
        -> String
    {
        guard let dialect, dialect.refreshTokenClaims != nil else { return presented }
        guard presented.utf8.count <= 8192, let jws = try? CompactJWS(parsing: presented), jws.header.alg == "ES256",
            let kid = jws.header.kid,
            let publicKey = try await signingKeys.verifyingKey(kid, projectId: project.id),
            jws.isValidSignature(for: publicKey),
            let claims = try? jws.decodePayload(WrappedRefreshClaims.self),
            claims.iss == dialect.issuer, claims.aud == dialect.audience
        else { throw Self.invalidRefreshToken }
        return claims.vrt
    }

    private func newRefreshToken() -> String {
        Self.refreshPrefix + Base64URL.encode(random.bytes(count: 32))
    }

    static let refreshPrefix = "vrt_"

    private static func isWellFormed(_ token: String) -> Bool {
        token.hasPrefix(refreshPrefix) && token.utf8.count <= 128
    }

    // MARK: - Errors

    static let invalidSession = VerityError(
        .invalidSession,
        "Send a current session token as `Authorization: Bearer <sessionJwt>`; refresh it if it expired.")
    /// A session token that was valid and has expired: refresh it (`invalid_session`, as any other refused token).
    static let expiredSession = VerityError(.invalidSession, "The session token expired; refresh it.")
    static let invalidRefreshToken = VerityError(
        .invalidRefreshToken, "The refresh token is unknown, expired or revoked; sign in again.")
    static let disabled = VerityError(.userDisabled, "This user is disabled and cannot sign in.")
}

/// The claims the server reads from a wrapped refresh token.
private struct WrappedRefreshClaims: Decodable {
    var iss: String
    var aud: String
    var vrt: String
}

/// The claims the server reads from a bearer session token.
private struct BearerClaims: Decodable {
    var iss: String
    var aud: String
    var sub: String
    var sid: String
    var exp: Double
}

extension Project {
    /// The project's refresh token lifetime as a time interval.
    var refreshLifetime: TimeInterval { TimeInterval(settings.refreshLifetime) }
}
