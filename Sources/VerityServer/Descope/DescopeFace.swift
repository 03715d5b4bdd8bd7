import Foundation
import HTTPTypes
import Hummingbird
import Logging
import VerityCore

/// The Descope auth face: what Descope's SDKs (python-sdk, descope-swift) send to `api.descope.com`, under a prefix,
/// so `DescopeClient(project_id, base_url="<public URL><prefix>")` works unchanged. One-time codes by email, SMS,
/// voice and WhatsApp, sessions (refresh, me, logout), step-up, the public keys the SDKs validate tokens with, and
/// the management calls a backend's admin code makes (``DescopeManagement``).
///
/// A translator: sign-in, its limits, sessions, step-up, users and roles are the Domain's; the face maps Descope's
/// credentials to a project, its names to Verity's, and Verity's refusals to Descope's error codes. Tokens are
/// worded in the ``SessionTokenDialect/descope(_:)`` dialect.
struct DescopeFace: UsesRuntime {
    let auth: AuthService
    let sessions: SessionService
    let users: UserService
    let roles: RoleService
    let accounts: UserAccounts
    /// Sign-up and sign-in by passkey (``addWebAuthnRoutes(to:)``).
    let passkeys: PasskeyAccounts
    let signingKeys: SigningKeyService
    let projects: DescopeProjects
    let runtime: Runtime
    /// `/descope`: the SDKs' base URL is `<public URL><prefix>`.
    let prefix: String
    /// Whether the server is reached over HTTPS (its public URL), so the DS/DSR cookies are `Secure`.
    var secureCookies = false

    func addRoutes(to router: Router<VerityRequestContext>) {
        let group = router.group(RouterPath(prefix)).add(
            middleware: FaceErrorMiddleware(wording: FaceErrorShape<DescopeError>(), logger: logger))
        group.get("v2/keys/:projectId", use: keySet)
        group.get("v1/keys/:projectId", use: keys)
        group.post("v1/auth/otp/signup-in/:method") { try await start($0, $1, .signUpOrIn) }
        group.post("v1/auth/otp/signin/:method") { try await start($0, $1, .signIn) }
        group.post("v1/auth/otp/signup/:method") { try await start($0, $1, .signUp) }
        group.post("v1/auth/otp/verify/:method", use: verify)
        group.post("v1/auth/otp/update/phone/:method") { try await update($0, $1, email: false) }
        group.post("v1/auth/otp/update/email") { try await update($0, $1, email: true) }
        group.post("v1/auth/refresh", use: refresh)
        group.get("v1/auth/me", use: me)
        group.post("v1/auth/logout", use: logout)
        group.post("v1/auth/logoutall", use: logoutAll)
        addWebAuthnRoutes(to: group)
        DescopeManagement(users: users, roles: roles, accounts: accounts, projects: projects).addRoutes(to: group)
        router.add(middleware: DescopeUnmatchedRoutes(prefix: prefix))
    }

    // MARK: - Keys

    /// `GET /v2/keys/{projectId}`: `{"keys": [JWK…]}`, what python-sdk fetches.
    @Sendable func keySet(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        ExactKeysJSON(["keys": .array(try await publicKeys(request, context))])
    }

    /// `GET /v1/keys/{projectId}`: the bare array.
    @Sendable func keys(_ request: Request, context: VerityRequestContext) async throws -> Response {
        let body = try JSONEncoder().encode(try await publicKeys(request, context))
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    private func publicKeys(_ request: Request, _ context: VerityRequestContext) async throws -> [JSONValue] {
        let project = try await projects.project(id: try context.parameters.require("projectId"))
        if request.headers[.authorization] != nil, !project.isNamed(try DescopeBearer(request).projectId) {
            throw DescopeError.unauthorized("The bearer value names another project.")
        }
        let data = try JSONEncoder().encode(try await signingKeys.keySet(projectId: project.id).keys)
        return try JSONDecoder().decode([JSONValue].self, from: data)
    }

    // MARK: - One-time codes

    enum StartKind {
        case signUpOrIn, signIn, signUp
    }

    /// `otp/signup-in|signin|signup/{method}`. Verity never says whether a login id has an account (that would
    /// let anyone probe for users), so all three sign up or in; a sign-in with `loginOptions.stepup` or `mfa` and
    /// a refresh JWT steps that session up instead. `loginOptions.customClaims` go into every token of the session
    /// the code opens, or of the session it steps up, from then on.
    func start(_ request: Request, _ context: VerityRequestContext, _ kind: StartKind) async throws -> ExactKeysJSON {
        let bearer = try DescopeBearer(request)
        let project = try await projects.project(bearer, request)
        let channel = try Self.channel(context)
        let body = try await request.decodeDescope(StartBody.self, context: context)
        guard let loginId = body.loginId, !loginId.isEmpty else {
            throw DescopeError.badRequest("`loginId` is required.")
        }
        let options = body.loginOptions ?? DescopeLoginOptions()
        if kind != .signUp, options.stepup == true || options.mfa == true {
            let signedIn = try await steppingUp(bearer, loginId: loginId, in: project)
            let started = try await auth.startStepUp(
                StepUpStartRequest(method: .otp, locale: options.locale, channel: channel), auth: signedIn,
                clientAddress: context.clientAddress, boundToSession: true, sessionClaims: options.customClaims,
                dialect: .descope(project), in: project)
            return Self.masked(started.maskedDestination ?? "", channel: started.channel ?? channel)
        }
        let started = try await auth.start(
            OTPStartRequest(
                loginId: loginId, channel: channel, locale: options.locale, sessionClaims: options.customClaims),
            clientAddress: context.clientAddress, dialect: .descope(project), in: project)
        return Self.masked(started.maskedDestination, channel: started.channel)
    }

    /// `otp/update/phone/{method}` and `otp/update/email`: sends a code to a new address of the refresh JWT's user;
    /// `otp/verify` with the new address, the code and that refresh JWT then makes it the user's login id of its kind
    /// (added, or replacing the one they had: a Verity user has at most one of each, and its login ids are its
    /// addresses, so `addToLoginIDs` changes nothing). An address another user holds is refused (E062107) once the
    /// code proves it, whatever `onMergeUseExisting` says: Verity never merges users.
    func update(_ request: Request, _ context: VerityRequestContext, email: Bool) async throws -> ExactKeysJSON {
        let (refreshJwt, project) = try await refreshJwt(request)
        // The Domain refuses a channel that does not reach the new address (a phone number by email).
        let channel = email ? Channel.email : try Self.channel(context)
        let body = try await request.decodeDescope(UpdateBody.self, context: context)
        guard let loginId = body.loginId, !loginId.isEmpty else {
            throw DescopeError.badRequest("`loginId` is required.")
        }
        guard let address = email ? body.email : body.phone, !address.isEmpty else {
            throw DescopeError.badRequest(email ? "`email` is required." : "`phone` is required.")
        }
        let signedIn = try await sessions.authenticate(
            refreshToken: refreshJwt, dialect: .descope(project), in: project)
        try Self.requireOwn(loginId, signedIn)
        let started = try await auth.startLoginUpdate(
            address, channel: channel, auth: signedIn, locale: body.locale, clientAddress: context.clientAddress,
            in: project)
        return Self.masked(started.maskedDestination, channel: started.channel)
    }

    /// `otp/verify/{method}`: the code of a sign-in, or of a step-up or login update (`otp/update/…`) started with the
    /// session's refresh JWT. The step-up or update completes only for a caller who proves that session again here, by
    /// its refresh JWT in the bearer value (or the `DSR` cookie of a project that sets it); anyone else gets the
    /// session a sign-in with the code gives. Neither python-sdk's `verify_code` nor descope-swift's `otp.verify`
    /// sends the refresh JWT, so through them a step-up or update by code signs in; descope-swift on Apple platforms
    /// sends back the `DSR` cookie its URLSession kept.
    @Sendable func verify(_ request: Request, context: VerityRequestContext) async throws -> DescopeTokens {
        let bearer = try DescopeBearer(request)
        let project = try await projects.project(bearer, request)
        _ = try Self.channel(context)
        let body = try await request.decodeDescope(VerifyBody.self, context: context)
        guard let loginId = body.loginId, !loginId.isEmpty else {
            throw DescopeError.badRequest("`loginId` is required.")
        }
        guard let code = body.code, !code.isEmpty else { throw DescopeError.badRequest("`code` is required.") }
        let signedIn = try await auth.verify(
            OTPVerifyRequest(loginId: loginId, code: code), clientAddress: context.clientAddress,
            dialect: .descope(project), sessionStepUps: true,
            sessionProof: Self.presentedRefreshJwt(bearer, request, in: project), in: project)
        return jwtResponse(signedIn, project: project)
    }

    // MARK: - Sessions

    /// `POST /v1/auth/refresh`: rotates the refresh JWT (a used one presented again revokes its session) and
    /// answers a new session JWT and the next refresh JWT.
    @Sendable func refresh(_ request: Request, context: VerityRequestContext) async throws -> DescopeTokens {
        let (refreshJwt, project) = try await refreshJwt(request)
        let refreshed = try await auth.refresh(
            refreshJwt, clientAddress: context.clientAddress, dialect: .descope(project), in: project)
        return jwtResponse(refreshed, project: project)
    }

    /// `GET /v1/auth/me`: the user of the refresh JWT's session.
    @Sendable func me(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let (refreshJwt, project) = try await refreshJwt(request)
        let signedIn = try await sessions.authenticate(
            refreshToken: refreshJwt, dialect: .descope(project), in: project)
        guard case .object(let user) = DescopeUser.json(signedIn.user) else { return ExactKeysJSON([:]) }
        return ExactKeysJSON(user)
    }

    /// `POST /v1/auth/logout`: ends the refresh JWT's session (and clears the cookies of a project that sets them).
    @Sendable func logout(_ request: Request, context: VerityRequestContext) async throws -> DescopeTokens {
        let (refreshJwt, project) = try await refreshJwt(request)
        try await auth.logout(
            refreshToken: refreshJwt, dialect: .descope(project), clientAddress: context.clientAddress, in: project)
        return loggedOut(project)
    }

    /// `POST /v1/auth/logoutall`: ends every session of the refresh JWT's user (and clears this browser's cookies).
    @Sendable func logoutAll(_ request: Request, context: VerityRequestContext) async throws -> DescopeTokens {
        let (refreshJwt, project) = try await refreshJwt(request)
        try await auth.logoutAll(
            refreshToken: refreshJwt, dialect: .descope(project), clientAddress: context.clientAddress, in: project)
        return loggedOut(project)
    }

    /// The answer to a logout: an empty body, and for a project that delivers tokens as cookies, `DS` and `DSR`
    /// expired (`Max-Age=0`, with the attributes they were set with, so the browser drops those very cookies).
    private func loggedOut(_ project: Project) -> DescopeTokens {
        guard project.settings.descopeCookies else { return DescopeTokens(body: [:], cookies: []) }
        let now = clock.now()
        return DescopeTokens(
            body: [:],
            cookies: ["DS", "DSR"].map { DescopeTokens.cookie($0, "", until: now, now: now, secure: secureCookies) })
    }

    // MARK: - Helpers

    /// The refresh JWT of a session call and its project; refused when the request presents none.
    func refreshJwt(_ request: Request) async throws -> (String, Project) {
        let bearer = try DescopeBearer(request)
        let project = try await projects.project(bearer, request)
        guard let refreshJwt = Self.presentedRefreshJwt(bearer, request, in: project) else {
            throw DescopeError.unauthorized("Send `Authorization: Bearer <projectId>:<refreshJwt>`.")
        }
        return (refreshJwt, project)
    }

    /// The refresh JWT a request presents, if any: the bearer value's, else the `DSR` cookie of a project that
    /// delivers tokens as cookies (never another project's: the cookie is only read once the bearer named it).
    private static func presentedRefreshJwt(_ bearer: DescopeBearer, _ request: Request, in project: Project)
        -> String?
    {
        bearer.secret ?? (project.settings.descopeCookies ? HTTPCookie.value("DSR", in: request) : nil)
    }

    /// The delivery method of the path: `email`, `sms`, `voice` or `whatsapp`.
    private static func channel(_ context: VerityRequestContext) throws -> Channel {
        guard let method = context.parameters.get("method"), let channel = Channel(rawValue: method) else {
            throw DescopeError.badRequest("The method is one of email, sms, voice, whatsapp.")
        }
        return channel
    }

    /// The session a step-up or MFA start steps up: the one whose refresh JWT the bearer value carries, which must be
    /// of the user holding `loginId`.
    func steppingUp(_ bearer: DescopeBearer, loginId: String, in project: Project) async throws -> SessionAuth {
        guard let refreshJwt = bearer.secret else {
            throw DescopeError.badRequest(
                "A step-up or MFA sign-in sends `Authorization: Bearer <projectId>:<refreshJwt>`.")
        }
        let signedIn = try await sessions.authenticate(
            refreshToken: refreshJwt, dialect: .descope(project), in: project)
        try Self.requireOwn(loginId, signedIn)
        return signedIn
    }

    /// Refuses a login id that is not one of the signed-in user's (the Domain's comparison of login ids).
    static func requireOwn(_ loginId: String, _ signedIn: SessionAuth) throws {
        guard UserLogins.contains(loginId, in: signedIn.user.loginIds) else {
            throw DescopeError.badRequest("The login id is not the signed-in user's.")
        }
    }

    private static func masked(_ destination: String, channel: Channel) -> ExactKeysJSON {
        ExactKeysJSON([channel == .email ? "maskedEmail" : "maskedPhone": .string(destination)])
    }

    /// Descope's JWTResponse: both tokens in the body, the full user, `firstSeen`, and the cookie fields python-sdk
    /// copies. A project that delivers tokens as cookies gets `DS` and `DSR` too, and the refresh JWT only as the
    /// HttpOnly `DSR` cookie (python-sdk and descope-swift take it from there; the session JWT stays in the body,
    /// where python-sdk looks for it).
    func jwtResponse(_ signedIn: AuthResponse, project: Project) -> DescopeTokens {
        var body: [String: JSONValue] = [
            "sessionJwt": .string(signedIn.sessionJwt), "user": DescopeUser.json(signedIn.user),
            "firstSeen": .bool(signedIn.firstSeen),
            "sessionExpiration": .integer(Int64(signedIn.sessionExpiresAt.timeIntervalSince1970)),
            "cookieExpiration": .integer(Int64(signedIn.refreshExpiresAt.timeIntervalSince1970)),
            "cookieMaxAge": .integer(max(0, Int64(signedIn.refreshExpiresAt.timeIntervalSince(clock.now())))),
            "cookieDomain": .string(""), "cookiePath": .string("/"),
        ]
        guard project.settings.descopeCookies else {
            if let refreshJwt = signedIn.refreshToken { body["refreshJwt"] = .string(refreshJwt) }
            return DescopeTokens(body: body, cookies: [])
        }
        var cookies = [
            DescopeTokens.cookie(
                "DS", signedIn.sessionJwt, until: signedIn.sessionExpiresAt, now: clock.now(), secure: secureCookies)
        ]
        if let refreshJwt = signedIn.refreshToken {
            cookies.append(
                DescopeTokens.cookie(
                    "DSR", refreshJwt, until: signedIn.refreshExpiresAt, now: clock.now(), secure: secureCookies))
        }
        return DescopeTokens(body: body, cookies: cookies)
    }
}

/// `loginOptions` of a sign-in start: step-up or MFA of the bearer's session, claims for the session, a locale.
struct DescopeLoginOptions: Decodable {
    var stepup: Bool?
    var mfa: Bool?
    var customClaims: [String: JSONValue]?
    var locale: String?
}

private struct StartBody: Decodable {
    var loginId: String?
    var loginOptions: DescopeLoginOptions?
}

private struct UpdateBody: Decodable {
    var loginId: String?
    var email: String?
    var phone: String?
    var addToLoginIDs: Bool?
    var onMergeUseExisting: Bool?
    var locale: String?
}

private struct VerifyBody: Decodable {
    var loginId: String?
    var code: String?
}
