import Foundation
import VerityCore

/// The app's entry point to Verity sign-in: one-time codes, the signed-in session, its refresh, and step-up.
///
/// Create one instance per project and keep it. It is an actor because it owns the session: it keeps it in the
/// ``SecureStore`` (restoring it on first use after a restart), refreshes the session token shortly before it
/// expires, and makes sure only one refresh is ever under way, since the server revokes the whole session when a
/// refresh token is presented twice.
///
/// ```swift
/// let verity = VeritySession(
///     configuration: VerityConfiguration(baseURL: URL(string: "https://verify.example.com")!),
///     projectId: "prj_3f9a…", store: KeychainSecureStore())
///
/// // Sign in with a code sent by SMS. Calling verifyPhoneNumber again while the code is pending sends nothing.
/// let verificationID = try await verity.verifyPhoneNumber("+14155550123")
/// let session = try await verity.signIn(verificationID: verificationID, code: codeTheUserTyped)
/// print(session.user.id, session.roles)
///
/// // Follow sign-in and sign-out.
/// for await session in await verity.sessionChanges() {
///     showSignedIn(session != nil)
/// }
///
/// // Call the app's backend with a valid session token; a 401 refreshes the session and retries once.
/// let orders = try await verity.withSession { sessionJwt in
///     try await backend.orders(authorization: "Bearer \(sessionJwt)")
/// }
///
/// // Prove a second factor before something sensitive.
/// let started = try await verity.stepUp(method: .otp)
/// let steppedUp = try await verity.completeStepUp(code: secondCode)  // steppedUp.isSteppedUp == true
///
/// await verity.logout()
/// ```
///
/// Log messages name operations, paths, statuses, error codes and session and user ids; never tokens, codes or login
/// ids.
public actor VeritySession {
    /// Seconds before the session token expires from which it counts as expiring: ``validSessionJWT()`` refreshes it
    /// first, and the automatic refresh runs this long before expiry. A token that lives less than four minutes is
    /// refreshed a quarter of its lifetime before it expires instead.
    public static let refreshMargin: TimeInterval = 60
    /// Seconds to wait before the automatic refresh tries again after it failed without ending the session (no
    /// connection, a server error).
    public static let refreshRetryInterval: TimeInterval = 30

    /// The configuration this instance was created with.
    public nonisolated let configuration: VerityConfiguration
    /// The project's public id (`prj_…`), sent with every request.
    public nonisolated let projectId: String
    /// The signed-in state for the app's views, readable synchronously on the main actor and observable.
    public nonisolated let state: VeritySessionState

    /// The API client, shared with ``VerityPasskeys`` for decoding answers.
    nonisolated let client: VerityAPIClient
    private let appVerification: VerityAppVerification?
    private let store: any SecureStore
    private let logger: VerityLogger
    private let clock: @Sendable () -> Date
    private let sleep: @Sendable (Duration) async throws -> Void
    private let storageKey: String

    private var current: Session?
    private var isRestored = false
    private var isConfigurationChecked = false
    /// The refresh under way, which every caller shares.
    private var refreshTask: Task<Session, any Error>?
    /// The `verifyPhoneNumber` requests under way, by phone number.
    private var phoneVerifications: [String: Task<OTPStartResponse, any Error>] = [:]
    private var subscribers: [UUID: AsyncStream<Session?>.Continuation] = [:]
    private var automaticRefresh: Task<Void, Never>?
    /// When, by this device's clock, the current session token came from the server: its refresh is due that long
    /// into its lifetime whatever the device's clock says the absolute time is.
    private var receivedAt: (sessionJwt: String, date: Date)?

    /// Creates the sign-in entry point for one project.
    ///
    /// - Parameters:
    ///   - configuration: The server's base URL.
    ///   - projectId: The project's public id (`prj_…`).
    ///   - transport: Sends the HTTP requests.
    ///   - store: Keeps the session across restarts; on Apple platforms a `KeychainSecureStore`.
    ///   - logger: Receives diagnostic messages, which never contain tokens.
    ///   - clock: The current time, to decide when the session token needs a refresh.
    ///   - sleep: Waits until the automatic refresh is due; it throws when its task is cancelled.
    ///   - appVerification: Proves that code requests come from this app, for projects that require it.
    public init(
        configuration: VerityConfiguration,
        projectId: String,
        transport: any Transport = URLSessionTransport(),
        store: any SecureStore,
        logger: VerityLogger = .disabled,
        clock: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        appVerification: VerityAppVerification? = nil
    ) {
        self.configuration = configuration
        self.projectId = projectId
        self.appVerification = appVerification
        self.client = VerityAPIClient(baseURL: configuration.baseURL, transport: transport, logger: logger)
        self.store = store
        self.logger = logger
        self.clock = clock
        self.sleep = sleep
        self.storageKey = "verity.session.\(projectId)"
        // The state shows the stored session at once; the actor reads it again on first use, to schedule its refresh
        // (or, when the store is locked now, to try again).
        let stored = try? store.data(forKey: storageKey).flatMap { try StoredSession(decoding: $0).session() }
        self.state = VeritySessionState(session: stored)
    }

    // MARK: - The session

    /// The current session, or `nil` when no one is signed in; restored from the secure store on first use.
    ///
    /// Its session token may have expired; use ``validSessionJWT()`` or ``withSession(isolation:_:)`` to call a
    /// backend.
    public var session: Session? {
        restoreIfNeeded()
        return current
    }

    /// The session as it changes: first the current one, then every sign-in, refresh, step-up and sign-out (`nil`).
    ///
    /// Any number of streams may be open at once; each ends when its consumer stops iterating.
    ///
    /// - Returns: A stream of sessions.
    public func sessionChanges() -> AsyncStream<Session?> {
        restoreIfNeeded()
        let (stream, continuation) = AsyncStream.makeStream(of: Session?.self)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            Task { await self.removeSubscriber(id) }
        }
        continuation.yield(current)
        return stream
    }

    // MARK: - Signing in

    /// Sends a sign-in code to a login id; the user is created on first sign-in.
    ///
    /// When a code is already pending for the login id, it is sent again.
    ///
    /// - Parameters:
    ///   - loginId: An email address or an E.164 phone number.
    ///   - channel: `Channel.sms`, `Channel.voice` (a call that says the code) or `Channel.whatsapp` for a phone number,
    ///     `Channel.email` for an address; SMS or email from the login id when `nil`. The same pending code goes by
    ///     whichever channel is asked, so "call me instead" is this call again with `.voice`.
    ///   - locale: A BCP 47 language tag for the message, or `nil` for the project's default.
    /// - Returns: Where the code went and the verification id that ``signIn(verificationID:code:)`` takes.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `invalid_login_id`, `user_disabled`,
    ///   `rate_limited` or `max_send_attempts_reached` when the server refuses.
    public func startOTP(loginId: String, channel: Channel? = nil, locale: String? = nil) async throws
        -> OTPStartResponse
    {
        try await requestCode(OTPStartRequest(loginId: loginId, channel: channel, locale: locale))
    }

    /// ``startOTP(loginId:channel:locale:)`` for a session that is to carry claims of the app's choosing, as Descope's
    /// `loginOptions.customClaims` does.
    ///
    /// - Parameters:
    ///   - loginId: An email address or an E.164 phone number.
    ///   - channel: The channel, or `nil` for SMS or email from the login id.
    ///   - locale: A BCP 47 language tag for the message, or `nil` for the project's default.
    ///   - sessionClaims: Claims every token of the session this code opens carries, beside the user's custom claims
    ///     (which win a name both have): a JSON object of at most 4 KiB, with no registered claim name.
    /// - Returns: Where the code went and the verification id.
    /// - Throws: ``VerityKitError``, as ``startOTP(loginId:channel:locale:)`` does; the server refuses claims that do
    ///   not fit.
    public func startOTP(
        loginId: String, channel: Channel? = nil, locale: String? = nil, sessionClaims: [String: JSONValue]
    ) async throws -> OTPStartResponse {
        try await requestCode(
            OTPStartRequest(loginId: loginId, channel: channel, locale: locale, sessionClaims: sessionClaims))
    }

    /// Signs in with the code sent to a login id by ``startOTP(loginId:channel:locale:)``.
    ///
    /// - Parameters:
    ///   - loginId: The login id the code was sent to.
    ///   - code: The code the user typed.
    /// - Returns: The new session, which is stored and announced to ``sessionChanges()``.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `wrong_code` (the problem's
    ///   `remainingAttempts` says how many tries are left), `max_check_attempts_reached`, `verification_not_found`
    ///   or `user_disabled` when the server refuses.
    public func verifyOTP(loginId: String, code: String) async throws -> Session {
        try await signIn(with: OTPVerifyRequest(loginId: loginId, code: code))
    }

    /// Sends a sign-in code by SMS, unless one is already pending for the number, and returns its verification id.
    ///
    /// Safe to call again, for example when a screen reappears: while a code is pending the same verification id is
    /// returned and no second message is sent, and calls made while a request for the same number is under way share
    /// that request. To send the code again on the user's request, use ``startOTP(loginId:channel:locale:)``.
    ///
    /// - Parameters:
    ///   - phoneNumber: The phone number, in E.164 form (`+14155550123`).
    ///   - locale: A BCP 47 language tag for the message, or `nil` for the project's default.
    /// - Returns: The verification id for ``signIn(verificationID:code:)``.
    /// - Throws: ``VerityKitError``, as for ``startOTP(loginId:channel:locale:)``.
    public func verifyPhoneNumber(_ phoneNumber: String, locale: String? = nil) async throws -> String {
        let key = (try? PhoneNumber(parsing: phoneNumber).e164) ?? phoneNumber
        if let inFlight = phoneVerifications[key] {
            return try await inFlight.value.verificationId
        }
        let request = OTPStartRequest(loginId: phoneNumber, channel: .sms, locale: locale, resend: false)
        // An unstructured task, so that a caller that is cancelled does not fail the others sharing the request.
        let task = Task { try await self.requestCode(request) }
        phoneVerifications[key] = task
        let result = await task.result
        phoneVerifications[key] = nil
        return try result.get().verificationId
    }

    /// Signs in with the code sent for a verification id from ``verifyPhoneNumber(_:locale:)`` or
    /// ``startOTP(loginId:channel:locale:)``.
    ///
    /// - Parameters:
    ///   - verificationID: The verification id (`ver_…`).
    ///   - code: The code the user typed.
    /// - Returns: The new session, which is stored and announced to ``sessionChanges()``.
    /// - Throws: ``VerityKitError``, as for ``verifyOTP(loginId:code:)``.
    public func signIn(verificationID: String, code: String) async throws -> Session {
        try await signIn(with: OTPVerifyRequest(verificationId: verificationID, code: code))
    }

    // MARK: - Using the session

    /// A session token that is valid for at least ``refreshMargin`` seconds more (a quarter of its lifetime for a
    /// token that lives less than four minutes), refreshing the session first when needed.
    ///
    /// - Returns: The session token, for an `Authorization: Bearer …` header.
    /// - Throws: ``VerityKitError/notSignedIn`` without a session; the errors of ``refresh()`` when a refresh was
    ///   needed and failed.
    public func validSessionJWT() async throws -> String {
        if let refreshTask {
            return try await refreshTask.value.sessionJwt
        }
        restoreIfNeeded()
        guard let session = current else { throw VerityKitError.notSignedIn }
        guard clock() < refreshDue(session) else {
            return try await refresh().sessionJwt
        }
        return session.sessionJwt
    }

    /// Runs `body` with a valid session token; when `body` reports that the token was refused, refreshes the session
    /// and runs `body` once more with the new token.
    ///
    /// A refusal is a ``VerityKitError/server(_:)`` with HTTP status 401 and the code `invalid_session`,
    /// `unauthorized` (also what an error answer without a problem document becomes) or a code this version of
    /// VerityKit does not know. Other 401s, such as `wrong_code`, are thrown as they are. An app calling its own
    /// backend throws `VerityKitError.server(Problem(code: .invalidSession))` when the backend refuses the token.
    ///
    /// - Parameters:
    ///   - isolation: Where `body` runs: the caller's actor.
    ///   - body: The work to do with the session token.
    /// - Returns: What `body` returns.
    /// - Throws: ``VerityKitError/notSignedIn`` without a session, the errors of ``refresh()``, and what `body` throws.
    public func withSession<Value>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (_ sessionJwt: String) async throws -> Value
    ) async throws -> Value {
        let sessionJwt = try await validSessionJWT()
        do {
            return try await body(sessionJwt)
        } catch let error as VerityKitError where Self.isRefusedSessionToken(error) {
            logger.log(.info, "the session token was refused; refreshing and retrying once")
            return try await body(try await sessionJWT(replacing: sessionJwt))
        }
    }

    /// Asks the server who is signed in, and keeps the user it describes in the session.
    ///
    /// - Returns: The user, their permissions and how the session was authenticated.
    /// - Throws: ``VerityKitError``, as for ``withSession(isolation:_:)``.
    public func me() async throws -> MeResponse {
        let me = try await withSession { sessionJwt in
            let response = try await send(.get, "v1/auth/me", bearerToken: sessionJwt)
            return try client.decode(MeResponse.self, from: response, status: 200)
        }
        if let session = current, session.sessionId == me.sessionId, session.user != me.user {
            setSession(try session.replacingUser(me.user), event: "updated the user of")
        }
        return me
    }

    // MARK: - Refreshing

    /// Exchanges the refresh token for a new session token and a new refresh token.
    ///
    /// Concurrent calls share one request: presenting the same refresh token twice would make the server revoke the
    /// session. When the server refuses the refresh token (`invalid_refresh_token`, `refresh_token_reused`) or the
    /// user is disabled (`user_disabled`), the session ends here too: it is removed from the store and ``session`` and
    /// ``sessionChanges()`` become `nil`. Any other failure, a lost connection say, keeps the session.
    ///
    /// - Returns: The refreshed session.
    /// - Throws: ``VerityKitError/notSignedIn`` without a session, ``VerityKitError/network(_:)``,
    ///   ``VerityKitError/server(_:)``.
    public func refresh() async throws -> Session {
        if let refreshTask {
            return try await refreshTask.value
        }
        restoreIfNeeded()
        guard let session = current else { throw VerityKitError.notSignedIn }
        let task = Task { try await self.performRefresh(presenting: session.refreshToken) }
        refreshTask = task
        return try await task.value
    }

    // MARK: - Signing out

    /// Signs out: ends the session on this device and asks the server to revoke it.
    ///
    /// The session is removed locally first and in any case, even when the server cannot be reached; a failure to
    /// revoke it on the server is only logged (its refresh token then expires unused).
    public func logout() async {
        // Let a refresh under way finish, so the refresh token revoked is the live one.
        if let refreshTask {
            _ = try? await refreshTask.value
        }
        restoreIfNeeded()
        guard let session = current else { return }
        // Cleared before the request, so that nothing can refresh the session while the request is under way.
        clearSession(event: "signed out of")
        do {
            let response = try await send(
                .post, "v1/auth/logout", body: RefreshRequest(refreshToken: session.refreshToken))
            try client.check(response, status: 204)
        } catch {
            logger.log(
                .warning, "the server was not told about the sign-out: \((error as? VerityKitError)?.code ?? "error")")
        }
    }

    /// Signs the user out everywhere: asks the server to revoke all the user's sessions, then ends this one.
    ///
    /// - Throws: ``VerityKitError``; the session is kept when the server could not be told.
    public func logoutAll() async throws {
        restoreIfNeeded()
        let sessionId = current?.sessionId
        try await withSession { sessionJwt in
            let response = try await send(.post, "v1/auth/logout-all", bearerToken: sessionJwt)
            try client.check(response, status: 204)
        }
        if current?.sessionId == sessionId {
            clearSession(event: "signed out everywhere from")
        }
    }

    // MARK: - Step-up

    /// Starts a step-up: sends a code to the user's other login id, or a push challenge to their device, or (TOTP)
    /// only confirms that the user has an authenticator app to take a code from.
    ///
    /// - Parameters:
    ///   - method: `StepUpMethod.otp`, `StepUpMethod.push` or `StepUpMethod.totp`; `nil` lets the server choose
    ///     (push when the user has a verified push factor, then TOTP, then a code).
    ///   - locale: A BCP 47 language tag for the code message, or `nil` for the project's default.
    ///   - channel: How a code to the user's phone goes: `sms` (`nil`, the default), `voice` or `whatsapp`.
    /// - Returns: What was started: where the code went, or the push challenge to wait for.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `no_second_factor` when the user has none.
    public func stepUp(method: StepUpMethod? = nil, locale: String? = nil, channel: Channel? = nil) async throws
        -> StepUpStartResponse
    {
        let request = StepUpStartRequest(method: method, locale: locale, channel: channel)
        return try await withSession { sessionJwt in
            try await requestingCode(
                "v1/auth/stepup/start", body: request, bearerToken: sessionJwt, as: StepUpStartResponse.self)
        }
    }

    /// Completes a code step-up with the code sent by ``stepUp(method:locale:channel:)``.
    ///
    /// - Parameter code: The code the user typed.
    /// - Returns: The stepped-up session (``Session/isSteppedUp``), which keeps its refresh token.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `wrong_code` when the code is wrong.
    public func completeStepUp(code: String) async throws -> Session {
        try await completeStepUp(with: StepUpVerifyRequest(code: code))
    }

    /// Completes a TOTP step-up with a code from the user's authenticator app.
    ///
    /// - Parameter totpCode: The code the authenticator app shows now.
    /// - Returns: The stepped-up session (``Session/isSteppedUp``, `totp` in ``Session/amr``), which keeps its refresh
    ///   token.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `wrong_code` when the code is wrong or was
    ///   already used.
    public func completeStepUp(totpCode: String) async throws -> Session {
        try await completeStepUp(with: StepUpVerifyRequest(code: totpCode, method: .totp))
    }

    /// Completes a push step-up once the challenge from ``stepUp(method:locale:channel:)`` was approved on the device.
    ///
    /// - Parameter challengeId: The push challenge (`chl_…`).
    /// - Returns: The stepped-up session (``Session/isSteppedUp``), which keeps its refresh token.
    /// - Throws: ``VerityKitError``; ``VerityKitError/server(_:)`` with `challenge_pending` while the challenge is not
    ///   answered yet (ask again later) and `challenge_denied` when it was denied.
    public func completeStepUp(challengeId: String) async throws -> Session {
        try await completeStepUp(with: StepUpVerifyRequest(challengeId: challengeId))
    }

    // MARK: - Requests

    private func requestCode(_ request: OTPStartRequest) async throws -> OTPStartResponse {
        let started = try await requestingCode("v1/auth/otp/start", body: request, as: OTPStartResponse.self)
        logger.log(
            .info,
            "sign-in verification \(started.verificationId) by \(started.channel.rawValue)"
                + (started.sent ? ": code sent" : ": nothing sent"))
        return started
    }

    private func signIn(with request: OTPVerifyRequest) async throws -> Session {
        try await signIn(at: "v1/auth/otp/verify", encodedBody: try VerityAPIClient.encode(request))
    }

    /// Signs in with the answer of a `POST` to `path` (an OTP or a passkey verification): stores and announces the
    /// session.
    func signIn(at path: String, encodedBody: Data) async throws -> Session {
        restoreIfNeeded()
        let response = try await send(.post, path, encodedBody: encodedBody)
        let answer = try client.decode(AuthResponse.self, from: response, status: 200)
        guard let refreshToken = answer.refreshToken else {
            throw VerityKitError.mapping("The sign-in answer has no refresh token.")
        }
        let session = try Self.session(from: answer, refreshToken: refreshToken, firstSeen: answer.firstSeen)
        setSession(session, event: answer.firstSeen ? "signed up a new user with" : "signed in with")
        return session
    }

    /// The one refresh request of a ``refreshTask``; applies its outcome to the session.
    private func performRefresh(presenting refreshToken: String) async throws -> Session {
        defer { refreshTask = nil }
        do {
            let response = try await send(.post, "v1/auth/refresh", body: RefreshRequest(refreshToken: refreshToken))
            let answer = try client.decode(AuthResponse.self, from: response, status: 200)
            guard let newRefreshToken = answer.refreshToken else {
                throw VerityKitError.mapping("The refresh answer has no refresh token.")
            }
            let session = try Self.session(
                from: answer, refreshToken: newRefreshToken, firstSeen: current?.firstSeen ?? false)
            guard current?.refreshToken == refreshToken else {
                // Someone signed in anew while the request was under way: that session stays and this answer, for
                // the session it replaced, is dropped.
                guard let current else { throw VerityKitError.notSignedIn }
                return current
            }
            setSession(session, event: "refreshed")
            return session
        } catch let error as VerityKitError where Self.endsSession(error) {
            if current?.refreshToken == refreshToken {
                clearSession(event: "the server refused the refresh token (\(error.problem?.code ?? "")); ended")
            }
            throw error
        }
    }

    private func completeStepUp(with request: StepUpVerifyRequest) async throws -> Session {
        let answer = try await withSession { sessionJwt in
            let response = try await send(.post, "v1/auth/stepup/verify", body: request, bearerToken: sessionJwt)
            return try client.decode(AuthResponse.self, from: response, status: 200)
        }
        guard let previous = current else { throw VerityKitError.notSignedIn }
        // A step-up answer has no refresh token: the session keeps the one it has.
        let session = try Self.session(
            from: answer, refreshToken: answer.refreshToken ?? previous.refreshToken, firstSeen: previous.firstSeen)
        guard session.sessionId == previous.sessionId else {
            throw VerityKitError.mapping("The step-up answer is for another session.")
        }
        setSession(session, event: "stepped up")
        return session
    }

    /// After `body` of ``withSession(isolation:_:)`` saw `refused` refused: a newer session token if another task
    /// already refreshed the session, otherwise the token of a refresh.
    private func sessionJWT(replacing refused: String) async throws -> String {
        if let refreshTask {
            return try await refreshTask.value.sessionJwt
        }
        restoreIfNeeded()
        guard let session = current else { throw VerityKitError.notSignedIn }
        guard session.sessionJwt == refused else { return session.sessionJwt }
        return try await refresh().sessionJwt
    }

    private func send(
        _ method: TransportRequest.Method, _ path: String, body: some Encodable, bearerToken: String? = nil
    ) async throws -> TransportResponse {
        try await send(method, path, encodedBody: try VerityAPIClient.encode(body), bearerToken: bearerToken)
    }

    /// Sends a request to the app-facing API, with the project header; shared with ``VerityPasskeys``.
    func send(
        _ method: TransportRequest.Method, _ path: String, encodedBody: Data? = nil, bearerToken: String? = nil,
        appProof: String? = nil
    ) async throws -> TransportResponse {
        try checkConfiguration()
        var headers = [AuthHeaders.project: projectId]
        headers[AuthHeaders.appVerification] = appProof
        return try await client.send(method, path, body: encodedBody, headers: headers, bearerToken: bearerToken)
    }

    /// A `POST` that makes the server send a code, with the app's proof when there is one. When the project requires
    /// a proof and has none it trusts, gets a new one from ``VerityAppVerification`` and sends the request again.
    private func requestingCode<Value: Decodable>(
        _ path: String, body: some Encodable, bearerToken: String? = nil, as type: Value.Type
    ) async throws -> Value {
        let encoded = try VerityAPIClient.encode(body)
        return try await VerityAppVerification.withProof(from: appVerification) { proof in
            let response = try await send(.post, path, encodedBody: encoded, bearerToken: bearerToken, appProof: proof)
            return try client.decode(type, from: response, status: 200)
        }
    }

    private func checkConfiguration() throws {
        guard !isConfigurationChecked else { return }
        try configuration.validateBaseURL()
        guard !projectId.isEmpty else {
            throw VerityKitError.initialization("The project id is empty.")
        }
        isConfigurationChecked = true
    }

    private static func session(from answer: AuthResponse, refreshToken: String, firstSeen: Bool) throws -> Session {
        try Session(
            sessionJwt: answer.sessionJwt, refreshToken: refreshToken, user: answer.user,
            sessionExpiresAt: answer.sessionExpiresAt, refreshExpiresAt: answer.refreshExpiresAt, firstSeen: firstSeen)
    }

    /// Whether a refresh failure means the session is over.
    private static func endsSession(_ error: VerityKitError) -> Bool {
        switch error.serverErrorCode {
        case .invalidRefreshToken?, .refreshTokenReused?, .userDisabled?: true
        default: false
        }
    }

    /// Whether an error from the body of ``withSession(isolation:_:)`` says the session token was refused.
    private static func isRefusedSessionToken(_ error: VerityKitError) -> Bool {
        guard let problem = error.problem, problem.status == 401 else { return false }
        switch problem.errorCode {
        case .invalidSession?, .unauthorized?, nil: return true
        default: return false
        }
    }

    // MARK: - Keeping the session

    private func setSession(_ session: Session, event: String) {
        isRestored = true
        if receivedAt?.sessionJwt != session.sessionJwt {
            receivedAt = (session.sessionJwt, clock())
        }
        current = session
        do {
            try store.set(try StoredSession(session).encoded(), forKey: storageKey)
        } catch {
            // The session still works until the app quits; failing the sign-in would lose a used code.
            logger.log(.warning, "the session could not be stored: \((error as? VerityKitError)?.code ?? "error")")
        }
        scheduleAutomaticRefresh(for: session)
        logger.log(.info, "\(event) session \(session.sessionId) of user \(session.user.id)")
        emit(session)
    }

    private func clearSession(event: String) {
        isRestored = true
        automaticRefresh?.cancel()
        automaticRefresh = nil
        guard let session = current else { return }
        current = nil
        do {
            try store.removeData(forKey: storageKey)
        } catch {
            logger.log(.warning, "the session could not be removed from the store")
        }
        logger.log(.info, "\(event) session \(session.sessionId)")
        emit(nil)
    }

    /// Reads the stored session once; a store that cannot be read now is tried again on the next use.
    private func restoreIfNeeded() {
        guard !isRestored else { return }
        let data: Data?
        do {
            data = try store.data(forKey: storageKey)
        } catch {
            logger.log(.warning, "the stored session could not be read; trying again later")
            return
        }
        isRestored = true
        guard let data else { return }
        do {
            let session = try StoredSession(decoding: data).session()
            current = session
            publish(session)
            logger.log(.info, "restored session \(session.sessionId) of user \(session.user.id)")
            scheduleAutomaticRefresh(for: session)
        } catch {
            logger.log(.warning, "the stored session is damaged; it was removed")
            try? store.removeData(forKey: storageKey)
        }
    }

    private func emit(_ session: Session?) {
        publish(session)
        for continuation in subscribers.values {
            continuation.yield(session)
        }
    }

    /// Hands the session to ``state`` on the main actor; the main actor runs its jobs in order, so the state follows
    /// the actor's changes in the order they were made.
    private func publish(_ session: Session?) {
        Task { @MainActor [state] in state.session = session }
    }

    private func removeSubscriber(_ id: UUID) {
        subscribers[id] = nil
    }

    // MARK: - Automatic refresh

    /// When `session` needs a refresh: a margin before its token expires.
    ///
    /// The margin is ``refreshMargin``, or a quarter of the token's lifetime (`exp` − `iat`) when that is shorter, so a
    /// short-lived token is not refreshed again and again. A token this instance received is measured from when it
    /// arrived, so a device clock that is off does not make it look expired (or fresh) when it is not.
    private func refreshDue(_ session: Session) -> Date {
        guard let issued = session.claims["iat"]?.doubleValue, let expires = session.claims["exp"]?.doubleValue,
            expires > issued
        else { return session.sessionExpiresAt.addingTimeInterval(-Self.refreshMargin) }
        let lifetime = expires - issued
        let margin = min(Self.refreshMargin, lifetime / 4)
        if let receivedAt, receivedAt.sessionJwt == session.sessionJwt {
            return receivedAt.date.addingTimeInterval(lifetime - margin)
        }
        return session.sessionExpiresAt.addingTimeInterval(-margin)
    }

    /// Replaces the scheduled refresh with one when `session` is due (``refreshDue(_:)``), or `delay` seconds from
    /// now.
    private func scheduleAutomaticRefresh(for session: Session, in delay: TimeInterval? = nil) {
        automaticRefresh?.cancel()
        let seconds = delay ?? max(0, refreshDue(session).timeIntervalSince(clock()))
        let refreshToken = session.refreshToken
        let sleep = self.sleep
        // Weak, so that a pending refresh does not keep a discarded instance alive.
        automaticRefresh = Task { [weak self] in
            do {
                try await sleep(.seconds(seconds))
            } catch {
                return
            }
            await self?.refreshAutomatically(presenting: refreshToken)
        }
    }

    private func refreshAutomatically(presenting refreshToken: String) async {
        guard !Task.isCancelled, current?.refreshToken == refreshToken else { return }
        do {
            _ = try await refresh()
        } catch {
            // A refusal already ended the session; anything else is tried again while the session lasts.
            guard let session = current, session.refreshToken == refreshToken else { return }
            logger.log(
                .warning,
                "automatic refresh failed (\((error as? VerityKitError)?.code ?? "error")); "
                    + "trying again in \(Int(Self.refreshRetryInterval)) s")
            scheduleAutomaticRefresh(for: session, in: Self.refreshRetryInterval)
        }
    }
}
