import Foundation
import Logging
import VerityCore

/// The app-facing sign-in rules: one-time codes that sign users up or in, test numbers, and step-up.
///
/// Codes are verifications with their own purpose (`sign_in`, `step_up`), so they share the API's rules (same code
/// on re-send, at most 5 sends and 5 wrong codes) but never pass for one another.
struct AuthService: Sendable, UsesRuntime {
    /// How long a step-up push challenge waits for its answer.
    static let stepUpChallengeLifetime = 300
    /// The hidden detail that binds a step-up push challenge to its session.
    static let stepUpSessionDetail = "verity.stepUpSession"

    let verifications: VerificationService
    let sessions: SessionService
    let testNumbers: TestNumberService
    let users: UserService
    let factors: FactorService
    let challenges: ChallengeService
    let appVerifications: AppVerificationService
    let limiter: RateLimiter
    let limits: RateLimits
    let runtime: Runtime

    // MARK: - Logout

    /// Ends the session `refreshToken` belongs to, after the client's limit: a logout answers the same for a token
    /// that is unknown, so unlimited it would let a client probe tokens for free.
    func logout(
        refreshToken: String, dialect: SessionTokenDialect? = nil, clientAddress: String?, in project: Project
    ) async throws {
        try await limitClient(clientAddress, in: project)
        try await sessions.logout(refreshToken, dialect: dialect, in: project)
    }

    /// Ends the session of `sessionToken` (a session JWT), after the client's limit.
    func logout(sessionToken: String?, clientAddress: String?, in project: Project) async throws {
        try await limitClient(clientAddress, in: project)
        try await sessions.logout(try await sessions.authenticate(bearer: sessionToken, in: project), in: project)
    }

    /// Ends every session of the user `sessionToken` (a session JWT) signs in, after the client's limit.
    func logoutAll(sessionToken: String?, clientAddress: String?, in project: Project) async throws {
        try await limitClient(clientAddress, in: project)
        try await sessions.logoutAll(try await sessions.authenticate(bearer: sessionToken, in: project), in: project)
    }

    /// Ends every session of the user `refreshToken` (in a face's `dialect`) signs in, after the client's limit.
    func logoutAll(
        refreshToken: String, dialect: SessionTokenDialect, clientAddress: String?, in project: Project
    ) async throws {
        try await limitClient(clientAddress, in: project)
        let auth = try await sessions.authenticate(refreshToken: refreshToken, dialect: dialect, in: project)
        try await sessions.logoutAll(auth, in: project)
    }

    // MARK: - Sign-in codes

    /// Sends a sign-in code. The session it opens carries `request.sessionClaims`, checked for `dialect`, the
    /// wording of the tokens the face answers the code with (Verity's when nil). `startedBy` names the face when what
    /// may read the code back depends on it (the Firebase emulator's list); a re-sent pending code keeps its own.
    func start(
        _ request: OTPStartRequest, clientAddress: String?, appProof: String? = nil,
        dialect: SessionTokenDialect? = nil, startedBy: StartingFace? = nil, in project: Project
    ) async throws -> OTPStartResponse {
        let (destination, channel) = try Self.destination(request.loginId, channel: request.channel)
        try DestinationPolicy.requireAllowed(destination, channel: channel, in: project)
        let language = try VerificationService.language(for: request.locale)
        let claims = try SessionService.requestedClaims(request.sessionClaims, dialect: dialect)
        let now = clock.now()
        let fixedCode = try await limitGuesses(destination, clientAddress: clientAddress, in: project, now: now)
        let appVerified = try await admitStart(
            destination, channel: channel, fixedCode: fixedCode, appProof: appProof, in: project, now: now)
        // A disabled user is answered as anyone else is (saying so would tell who has an account) but is sent
        // nothing; without a code, verify answers as for a wrong one.
        let disabled = try await users.isDisabled(loginKey: destination.key, in: project)
        // A test number is never sent to, so asking again only answers the pending code: no send is counted and
        // the send cap never applies.
        let (record, sent) = try await verifications.send(
            to: destination, channel: channel, language: language, purpose: .signIn, in: project,
            resend: fixedCode == nil && request.resend ?? true, deliver: fixedCode == nil && !disabled,
            sessionClaims: claims, startedBy: startedBy, appProof: appVerified, now: now)
        return OTPStartResponse(
            verificationId: record.id, channel: channel, maskedDestination: destination.masked,
            expiresAt: record.expiresAt,
            sent: disabled && fixedCode == nil
                ? (request.resend ?? true) || record.sendAttempts == 1 && record.createdAt == now : sent)
    }

    /// Signs in with a code; with `sessionStepUps`, a code bound to a session by
    /// ``startStepUp(_:auth:clientAddress:appProof:boundToSession:in:)`` steps that session up instead (for clients
    /// whose one verify call serves both, naming only the login id and the code).
    ///
    /// - Parameter sessionProof: The refresh token the caller holds, if it sent one. A session-bound step-up code
    ///   steps its session up, and a login-update code (``startLoginUpdate(_:channel:auth:locale:clientAddress:appProof:
    ///   in:)``) changes its session's user, only for a caller who proves that session with it: anyone else who holds
    ///   the code (who reads the mailbox it went to) gets what a sign-in with that code gives, a new session of that
    ///   one address, and the session that asked is left as it was.
    func verify(
        _ request: OTPVerifyRequest, clientAddress: String?, dialect: SessionTokenDialect? = nil,
        sessionStepUps: Bool = false, sessionProof: String? = nil, in project: Project
    ) async throws -> AuthResponse {
        try VerificationService.requireCodeFormat(request.code)
        let now = clock.now()
        let verification: VerificationRecord
        let fixedCode: String?
        switch (request.loginId, request.verificationId) {
        case (let loginId?, nil):
            // Limited before the look-up, so that whether a code is pending cannot be probed without limit.
            let (destination, _) = try Self.destination(loginId, channel: nil)
            fixedCode = try await limitGuesses(destination, clientAddress: clientAddress, in: project, now: now)
            let signIn = try await verifications.pending(to: destination, purpose: .signIn, in: project)
            if signIn == nil, sessionStepUps, let bound = try await pendingSessionBound(to: destination, in: project) {
                // Whoever holds the code without proving its session (one compromised mailbox racing the user's own
                // verify) must get nothing of that session (its factors, its user's new login id, a token of it):
                // the code signs them in, as a sign-in code to that address would.
                guard let auth = try await provenSession(bound.session, by: sessionProof, dialect: dialect, in: project)
                else {
                    logger.notice(
                        "Session-bound code verified without proof of its session: answered as a sign-in",
                        metadata: ["session": "\(bound.session)", "project": "\(project.id)"])
                    verification = bound.code
                    break
                }
                guard bound.code.purpose.steppedUpSession != nil else {
                    return try await verifyLoginUpdate(
                        request.code, on: bound.code, to: destination, auth: auth, fixedCode: fixedCode,
                        dialect: dialect, in: project, now: now)
                }
                switch try await verifications.attempt(request.code, on: bound.code, fixedCode: fixedCode, now: now) {
                case .wrong(let counted): throw Self.wrongCode(counted)
                case .approved(let approved):
                    // The verify names only the login id and the code, so the client may hold no refresh token
                    // it can keep (descope-swift takes the answer's): the session gains one more.
                    return try await sessions.stepUp(
                        auth, method: approved.channel.rawValue, claims: approved.sessionClaims,
                        issuingRefreshToken: true, dialect: dialect, in: project)
                }
            }
            verification = try Self.signInCode(signIn)
        case (nil, let id?):
            guard VerificationService.isVerificationId(id) else { throw VerificationService.notFound }
            verification = try await verifications.verification(id: id, purpose: .signIn, in: project)
            fixedCode = try await limitGuesses(
                try Destination(verification.destination, channel: verification.channel), clientAddress: clientAddress,
                in: project, now: now)
        default:
            throw VerityError(.invalidRequest, "Name the sign-in with exactly one of `loginId` or `verificationId`.")
        }
        // The approval and the session it opens commit together: a sign-in refused (a disabled user) leaves the
        // code pending, and an approved code always has its session.
        let logins = try UserLogins([verification.destination])
        let amr = ["otp", verification.channel.rawValue]
        let sessions = sessions
        switch try await verifications.attempt(
            request.code, on: verification, fixedCode: fixedCode, now: now,
            proving: { work, approved in
                try await sessions.open(
                    logins, amr: amr, claims: approved.sessionClaims ?? [:], in: project, in: work)
            })
        {
        case (.wrong(let counted), _):
            throw Self.wrongCode(counted)
        case (.approved, let opened?):
            return try await sessions.answer(opened, dialect: dialect, in: project)
        case (.approved, nil):  // cannot be: a proof was given, so an approval carries what it wrote
            throw StoreError.corruptValue(column: "verifications.status")
        }
    }

    /// Rotates a refresh token, within the per-client rate limit.
    func refresh(
        _ token: String, clientAddress: String?, dialect: SessionTokenDialect? = nil, in project: Project
    ) async throws -> AuthResponse {
        try await limitClient(clientAddress, in: project, now: clock.now())
        return try await sessions.refresh(token, clientAddress: clientAddress, dialect: dialect, in: project)
    }

    // MARK: - New login ids

    /// Sends a code to a new email address or phone number of a signed-in user; ``verify(_:clientAddress:dialect:
    /// sessionStepUps:in:)`` with that address and the code makes it the user's login id of its kind (adding it, or
    /// replacing the one they had). Whether another user holds the address is told only once the code proves it.
    func startLoginUpdate(
        _ loginId: String, channel requested: Channel, auth: SessionAuth, locale: String?, clientAddress: String?,
        appProof: String? = nil, in project: Project
    ) async throws -> OTPStartResponse {
        let (destination, channel) = try Self.destination(loginId, channel: requested)
        try DestinationPolicy.requireAllowed(destination, channel: channel, in: project)
        let language = try VerificationService.language(for: locale)
        let now = clock.now()
        let fixedCode = try await limitGuesses(destination, clientAddress: clientAddress, in: project, now: now)
        let appVerified = try await admitStart(
            destination, channel: channel, fixedCode: fixedCode, appProof: appProof, in: project, now: now)
        let (record, sent) = try await verifications.send(
            to: destination, channel: channel, language: language, purpose: .loginUpdate(session: auth.session.id),
            in: project, resend: fixedCode == nil, deliver: fixedCode == nil, appProof: appVerified, now: now)
        return OTPStartResponse(
            verificationId: record.id, channel: channel, maskedDestination: destination.masked,
            expiresAt: record.expiresAt, sent: sent)
    }

    /// Checks a login-update code; the approval and the new login id commit together, so a login id another user
    /// holds leaves the code pending and the user unchanged. Answers a new session token naming the new login id.
    private func verifyLoginUpdate(
        _ code: String, on update: VerificationRecord, to destination: Destination, auth: SessionAuth,
        fixedCode: String?, dialect: SessionTokenDialect?, in project: Project, now: Date
    ) async throws -> AuthResponse {
        let users = users
        switch try await verifications.attempt(
            code, on: update, fixedCode: fixedCode, now: now,
            proving: { work, _ in try await users.replaceLogin(destination, of: auth.user, in: work, in: project) }
        )
        {
        case (.wrong(let counted), _):
            throw Self.wrongCode(counted)
        case (.approved, let user?):
            return try await sessions.reissue(
                SessionAuth(session: auth.session, user: user), dialect: dialect, in: project)
        case (.approved, nil):  // cannot be: a proof was given, so an approval carries what it wrote
            throw StoreError.corruptValue(column: "verifications.status")
        }
    }

    // MARK: - Step-up

    /// Starts a step-up. A code is bound to the session when `boundToSession` (see ``verify(_:clientAddress:dialect:
    /// sessionStepUps:in:)``); otherwise ``verifyStepUp(_:auth:clientAddress:in:)`` checks it with the session.
    /// `sessionClaims` (a code step-up only; checked for `dialect` as a sign-in's) join the session's once the code
    /// is proven.
    func startStepUp(
        _ request: StepUpStartRequest, auth: SessionAuth, clientAddress: String?, appProof: String? = nil,
        boundToSession: Bool = false, sessionClaims: [String: JSONValue]? = nil, dialect: SessionTokenDialect? = nil,
        in project: Project
    ) async throws -> StepUpStartResponse {
        let claims = try SessionService.requestedClaims(sessionClaims, dialect: dialect)
        guard claims == nil || request.method == .otp else {
            throw VerityError(.invalidRequest, "Session claims come with a code (`otp`) step-up only.")
        }
        let now = clock.now()
        try await limitClient(clientAddress, in: project, now: now)
        let verified = try await factors.verifiedFactors(userId: auth.user.id, in: project)
        let hasPush = verified.contains { $0.type == .push }
        let hasTOTP = verified.contains { $0.type == .totp }
        switch request.method ?? (hasPush ? .push : hasTOTP ? .totp : .otp) {
        case .push:
            guard hasPush else {
                throw VerityError(.noSecondFactor, "The user has no verified push factor to approve a step-up.")
            }
            let challenge = try await challenges.create(
                CreateChallengeRequest(
                    userId: auth.user.id, message: "Confirm it's you to continue in \(project.name)?",
                    expiresIn: Self.stepUpChallengeLifetime),
                in: project, reserved: [Self.stepUpSessionDetail: auth.session.id])
            return StepUpStartResponse(method: .push, challengeId: challenge.id, expiresAt: challenge.expiresAt)
        case .totp:
            guard hasTOTP else {
                throw VerityError(.noSecondFactor, "The user has no verified TOTP factor (authenticator app).")
            }
            return StepUpStartResponse(method: .totp)
        case .otp:
            guard let destination = try Self.otherLogin(of: auth) else {
                throw VerityError(
                    .noSecondFactor,
                    "A code step-up goes to a login id the session did not use; this user has no other one.")
            }
            let channel = try Self.channel(request.channel, to: destination)
            try DestinationPolicy.requireAllowed(destination, channel: channel, in: project)
            // The per-client bucket was taken above.
            let fixedCode = try await limitGuesses(
                destination, clientAddress: nil, limitingClient: false, in: project, now: now)
            let appVerified = try await admitStart(
                destination, channel: channel, fixedCode: fixedCode, appProof: appProof, in: project, now: now)
            let (record, _) = try await verifications.send(
                to: destination, channel: channel, language: try VerificationService.language(for: request.locale),
                purpose: boundToSession ? .stepUp(session: auth.session.id) : .stepUp, in: project,
                resend: fixedCode == nil, deliver: fixedCode == nil, sessionClaims: claims, appProof: appVerified,
                now: now)
            return StepUpStartResponse(
                method: .otp, channel: channel, maskedDestination: destination.masked, expiresAt: record.expiresAt)
        }
    }

    func verifyStepUp(_ request: StepUpVerifyRequest, auth: SessionAuth, clientAddress: String?, in project: Project)
        async throws -> AuthResponse
    {
        let now = clock.now()
        try await limitClient(clientAddress, in: project, now: now)
        switch (request.code, request.challengeId, request.method) {
        case (let code?, nil, .totp):
            try VerificationService.requireCodeFormat(code)
            // Authenticator codes have no attempt counter of their own: the user's bucket bounds the guesses.
            try await limiter.take("totp:\(project.id):\(auth.user.id)", limits.perLoginId, now: now)
            guard try await factors.checkTOTP(code, userId: auth.user.id, in: project) else {
                throw VerityError(
                    .wrongCode, "The authenticator code is wrong or was already used; wait for the next one.")
            }
            return try await sessions.stepUp(auth, method: "totp", in: project)
        case (let code?, nil, .otp?), (let code?, nil, nil):
            try VerificationService.requireCodeFormat(code)
            guard let destination = try Self.otherLogin(of: auth),
                let verification = try await verifications.pending(to: destination, purpose: .stepUp, in: project)
            else { throw VerificationService.notFound }
            // The per-client bucket was taken above.
            let fixedCode = try await limitGuesses(
                destination, clientAddress: nil, limitingClient: false, in: project, now: now)
            switch try await verifications.attempt(code, on: verification, fixedCode: fixedCode, now: now) {
            case .wrong(let counted): throw Self.wrongCode(counted)
            case .approved(let approved):
                return try await sessions.stepUp(
                    auth, method: approved.channel.rawValue, claims: approved.sessionClaims, in: project)
            }
        case (nil, let challengeId?, .push?), (nil, let challengeId?, nil):
            // An approval steps up the session that asked for it, once.
            try await challenges.consumeApproval(
                id: challengeId, userId: auth.user.id, binding: (Self.stepUpSessionDetail, auth.session.id),
                in: project)
            return try await sessions.stepUp(auth, method: "push", in: project)
        default:
            throw VerityError(
                .invalidRequest,
                "Give exactly one of `code` (with `method` `otp` or `totp`) or `challengeId` (with `method` `push`).")
        }
    }

    // MARK: - Helpers

    /// The fixed code when `destination` is one of the project's test numbers.
    private func testCode(for destination: Destination, in project: Project) async throws -> String? {
        guard case .phone(let number) = destination else { return nil }
        return try await testNumbers.fixedCode(phone: number.e164, in: project)
    }

    /// The bucket of a client address: an IPv6 client's whole /64 (one subscriber's network hands out the rest of it
    /// freely), the address itself otherwise.
    static func clientBucket(_ address: String?) -> String {
        guard let address, let parsed = IPAddress(address) else { return address ?? "unknown" }
        if let v4 = parsed.embeddedIPv4 { return v4.description }
        return parsed.isIPv4 ? parsed.description : "\(parsed.masked(to: 64))/64"
    }

    /// Takes from the per-client bucket of the app-facing routes.
    func limitClient(_ address: String?, in project: Project, now: Date? = nil) async throws {
        try await limiter.take(
            "client:\(project.id):\(Self.clientBucket(address))", limits.perClientAddress, now: now ?? clock.now())
    }

    /// Takes the guessing limits of a code request, the same for a test number as for any other login id: the
    /// per-client bucket (unless `limitingClient` is false: the caller took it) and then the login id's, keyed on its
    /// canonical key. Returns the fixed code when `destination` is one of the project's test numbers.
    private func limitGuesses(
        _ destination: Destination, clientAddress: String?, limitingClient: Bool = true, in project: Project, now: Date
    ) async throws -> String? {
        if limitingClient { try await limitClient(clientAddress, in: project, now: now) }
        try await limiter.take("login:\(project.id):\(destination.key)", limits.perLoginId, now: now)
        return try await testCode(for: destination, in: project)
    }

    /// What starting a code takes: the app's proof where the project asks for one, then the send policy, for a
    /// destination that is sent to; a test number, never sent to, needs no proof of the app (as Firebase's test
    /// numbers need none) and takes from the project's bucket only. Returns the proof that admitted the send.
    private func admitStart(
        _ destination: Destination, channel: Channel, fixedCode: String?, appProof: String?, in project: Project,
        now: Date
    ) async throws -> AppVerificationProof? {
        guard fixedCode == nil else {
            try await limiter.take("project:\(project.id)", limits.perProject, now: now)
            return nil
        }
        let appVerified = try await appVerifications.requireProof(appProof, for: destination.key, in: project)
        try await verifications.admitSend(to: destination, channel: channel, in: project, now: now)
        return appVerified
    }

    /// The newest pending code bound to a session that goes to `destination` (a session-bound step-up's, else a
    /// login update's), with that session's id.
    private func pendingSessionBound(to destination: Destination, in project: Project) async throws -> (
        code: VerificationRecord, session: String
    )? {
        if let stepUp = try await verifications.pendingSessionStepUp(to: destination, in: project),
            let session = stepUp.purpose.steppedUpSession
        {
            return (stepUp, session)
        }
        if let update = try await verifications.pendingLoginUpdate(to: destination, in: project),
            let session = update.purpose.loginUpdateSession
        {
            return (update, session)
        }
        return nil
    }

    /// The session `sessionId` when `proof` is one of its refresh tokens; nil when the caller sent none, or one that
    /// is not that session's (unknown, revoked, another session's, or not a refresh token at all: python-sdk sends
    /// its management key in the same place).
    private func provenSession(
        _ sessionId: String, by proof: String?, dialect: SessionTokenDialect?, in project: Project
    ) async throws -> SessionAuth? {
        guard let proof else { return nil }
        let proven: SessionAuth
        do {
            proven = try await sessions.authenticate(refreshToken: proof, dialect: dialect, in: project)
        } catch let error as VerityError where error.code == .invalidRefreshToken {
            return nil
        }
        return proven.session.id == sessionId ? proven : nil
    }

    /// A sign-in code: a verification with the sign-in purpose (never the API's or a step-up's).
    private static func signInCode(_ found: VerificationRecord?) throws -> VerificationRecord {
        guard let found, found.purpose == .signIn else { throw VerificationService.notFound }
        return found
    }

    /// A login id and the channel its code goes by: an email address by email, a phone number by SMS unless the
    /// request names another phone channel (`voice`, `whatsapp`).
    private static func destination(_ loginId: String, channel: Channel?) throws -> (Destination, Channel) {
        guard loginId.utf8.count <= 1024 else {
            throw VerityError(.invalidLoginId, "A login id may have at most 1024 bytes.")
        }
        let kind = Destination.channel(ofLoginId: loginId)
        let destination: Destination
        do {
            destination = try Destination(loginId, channel: kind)
        } catch let error as VerityError {
            throw VerityError(.invalidLoginId, error.detail)
        }
        return (destination, try Self.channel(channel, to: destination))
    }

    /// The channel a code to `destination` goes by: the one asked for, which must reach it (a phone channel for a
    /// number, email for an address), or by default SMS or email.
    private static func channel(_ requested: Channel?, to destination: Destination) throws -> Channel {
        switch (destination, requested) {
        case (.email, nil), (.email, .email?): return .email
        case (.phone, nil): return .sms
        case (.phone, let channel?) where channel.reachesPhone: return channel
        default:
            throw VerityError(
                .invalidRequest,
                "A code goes to the login id itself: `sms`, `voice` or `whatsapp` for a phone number, `email` for an "
                    + "email address.")
        }
    }

    /// The user's login id of a kind the session has not proven, if any: a code by SMS, call or WhatsApp proves the
    /// phone number, one by email the address.
    private static func otherLogin(of auth: SessionAuth) throws -> Destination? {
        for loginId in auth.user.loginIds {
            let kind = Destination.channel(ofLoginId: loginId)
            let proven = Channel.allCases.contains { channel in
                channel.reachesPhone == kind.reachesPhone && auth.session.amr.contains(channel.rawValue)
            }
            if !proven {
                return try Destination(loginId, channel: kind)
            }
        }
        return nil
    }

    private static func wrongCode(_ counted: VerificationRecord) -> VerityError {
        let remaining = max(VerificationService.maxChecks - counted.checkAttempts, 0)
        guard remaining > 0 else {
            return VerityError(
                .maxCheckAttemptsReached, "Too many wrong codes: request a new code.", remainingAttempts: 0)
        }
        return VerityError(
            .wrongCode, "The code is wrong; \(remaining) more attempt\(remaining == 1 ? "" : "s") allowed.",
            remainingAttempts: remaining)
    }
}
