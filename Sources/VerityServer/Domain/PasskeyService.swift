import Foundation
import Logging
import VerityCore

/// Passkeys as a user's credentials: the ceremonies' challenges (single use, bound to the ceremony and the user,
/// expiring after the project's ``PasskeySettings/challengeLifetime``), registration, and the user's list of them.
///
/// The WebAuthn checks are ``PasskeyRelyingParty``'s; this service adds what needs state, each operation one unit of
/// work: a challenge is spent before the answer is checked, so a refused answer spends it too.
struct PasskeyService: Sendable, UsesRuntime {
    /// The ceremony a challenge was issued for; an answer spends only a challenge of its own ceremony.
    enum Ceremony: String, Sendable {
        case registration, authentication
        case stepUp = "step_up"
    }

    /// The longest friendly name kept.
    static let friendlyNameLimit = 64

    private let store: PasskeyStore
    let sessions: SessionService
    let runtime: Runtime

    init(store: PasskeyStore, sessions: SessionService, runtime: Runtime) {
        self.store = store
        self.sessions = sessions
        self.runtime = runtime
    }

    /// The options of a registration for the signed-in `user`, naming the passkeys they hold in `excludeCredentials`.
    func registrationOptions(
        for user: User, in project: Project, context: PasskeyCeremonyContext = .project
    ) async throws -> PasskeyCreationOptions {
        let relyingParty = try Self.relyingParty(of: project, context)
        let existing = try await store.passkeys(userId: user.id, projectId: project.id)
        let challenge = try await issueChallenge(.registration, userId: user.id, in: project, context)
        let name = user.loginIds.first ?? user.id
        return relyingParty.creationOptions(
            challenge: challenge, userHandle: Data(user.id.utf8), userName: name,
            userDisplayName: user.displayName ?? name,
            existing: existing.map {
                PasskeyCredentialDescriptor(id: $0.credential.credentialID, transports: $0.transports)
            })
    }

    /// Checks a registration answer against a challenge issued to `user` for a registration, and keeps the passkey.
    /// A credential id the project has already is refused with `conflict`. A face's context binds the answer to its
    /// transaction, and `recording` writes the face's own record of the passkey in the same unit of work.
    func register(
        _ answer: PasskeyRegistrationAnswer, friendlyName: String?, for user: User, in project: Project,
        context: PasskeyCeremonyContext = .project,
        recording: (@Sendable (PasskeyRecord, UnitOfWork) async throws -> Void)? = nil
    ) async throws -> PasskeyRecord {
        try await register(
            answer, friendlyName: friendlyName, in: project, context: context, admitting: { $0 == .user(user.id) },
            proving: { _, _, _ in }, recording: recording
        ).passkey
    }

    /// Checks a registration answer against a challenge issued for a registration of an existing user (by
    /// ``registrationOptions(for:in:)``), whoever it was, and keeps the passkey as theirs: for a client that names the
    /// ceremony but not the user when it finishes it.
    func register(_ answer: PasskeyRegistrationAnswer, friendlyName: String?, in project: Project) async throws
        -> PasskeyRecord
    {
        try await register(
            answer, friendlyName: friendlyName, in: project,
            admitting: {
                if case .user = $0 { true } else { false }
            }, proving: { _, _, _ in }
        ).passkey
    }

    /// Who a registration challenge was issued for.
    enum Registrant: Sendable, Equatable {
        /// An existing user: a signed-in user adding a passkey.
        case user(String)
        /// The user a sign-up creates once its answer is accepted.
        case newUser(PasskeySignUp)

        var userId: String {
            switch self {
            case .user(let id): id
            case .newUser(let signUp): signUp.userId
            }
        }
    }

    /// The one registration: spends the challenge, checks that it was issued for a registrant `admits` takes, checks
    /// the answer, runs `proving` (which writes what the registration proves: a new user, a session) and keeps the
    /// passkey, all in one unit of work. A refused answer still spends the challenge, and nothing else is written. The
    /// challenge must be the context's transaction's; `recording` writes a face's record of the passkey.
    private func register<Proof: Sendable>(
        _ answer: PasskeyRegistrationAnswer, friendlyName: String?, in project: Project,
        context: PasskeyCeremonyContext = .project,
        admitting admits: @escaping @Sendable (Registrant) -> Bool,
        proving: @escaping @Sendable (UnitOfWork, Registrant, RegisteredPasskey) async throws -> Proof,
        recording: (@Sendable (PasskeyRecord, UnitOfWork) async throws -> Void)? = nil
    ) async throws -> (passkey: PasskeyRecord, proof: Proof) {
        let relyingParty = try Self.relyingParty(of: project, context)
        let name = try Self.friendlyName(friendlyName ?? "Passkey")
        let now = clock.now()
        let challenge = try Self.challenge(in: answer.clientDataJSON)
        let outcome = try await store.unitOfWork { work in
            try await Result<(passkey: PasskeyRecord, proof: Proof), PasskeyRefusal>(ceremony: {
                let binding = try await store.consumeChallenge(
                    hash: Self.hash(challenge), ceremony: Ceremony.registration.rawValue, projectId: project.id,
                    now: now, in: work)
                guard let binding, let registrant = Self.registrant(binding), admits(registrant),
                    binding.transaction == context.transaction
                else { throw Self.unissued }
                let registered = try await relyingParty.verifyRegistration(answer, challenge: challenge, now: now)
                let proof = try await proving(work, registrant, registered)
                let passkey = PasskeyRecord(
                    id: identifiers.make("pky"), projectId: project.id, userId: registrant.userId,
                    registered: registered, friendlyName: name, createdAt: now)
                guard try await store.insert(passkey, in: work) else { throw Self.credentialTaken }
                try await recording?(passkey, work)
                return (passkey, proof)
            })
        }
        switch outcome {
        case .failure(let refusal): throw refusal.verityError
        case .success(let registered):
            logger.info(
                "Passkey registered",
                metadata: [
                    "user": "\(registered.passkey.userId)", "passkey": "\(registered.passkey.id)",
                    "project": "\(project.id)",
                ])
            return registered
        }
    }

    private static func registrant(_ binding: PasskeyStore.ChallengeBinding) -> Registrant? {
        if let userId = binding.userId { return .user(userId) }
        return binding.signUp.map(Registrant.newUser)
    }

    // MARK: - Sign-up

    /// The options of a sign-up: a registration for a user who does not exist yet, who will hold `logins`. The user's
    /// id is chosen now (the authenticator keeps it as the user handle); the user is written only by
    /// ``signUp(_:in:creating:)``.
    ///
    /// - Parameter sessionClaims: Claims the sign-up's session is to carry, checked already
    ///   (``SessionService/requestedClaims(_:dialect:)``).
    func signUpOptions(
        _ logins: UserLogins, displayName: String?, sessionClaims: [String: JSONValue]? = nil, in project: Project
    ) async throws -> PasskeyCreationOptions {
        let relyingParty = try Self.relyingParty(of: project)
        let signUp = PasskeySignUp(userId: identifiers.make("usr"), loginIds: logins.ids)
        let challenge = try await issueChallenge(
            .registration, userId: nil, signUp: signUp, sessionClaims: sessionClaims, in: project)
        let name = signUp.loginIds.first ?? signUp.userId
        return relyingParty.creationOptions(
            challenge: challenge, userHandle: Data(signUp.userId.utf8), userName: name,
            userDisplayName: displayName ?? name, existing: [])
    }

    /// Checks a sign-up's registration answer against a challenge of ``signUpOptions(_:displayName:in:)`` and, in the
    /// unit of work that spends the challenge and keeps the passkey, runs `creating`, which writes the user the
    /// sign-up names (and what else the sign-up opens). A refused answer spends the challenge and creates nobody; a
    /// failure of `creating` leaves nothing written.
    func signUp<Created: Sendable>(
        _ answer: PasskeyRegistrationAnswer, in project: Project,
        creating: @escaping @Sendable (UnitOfWork, PasskeySignUp, RegisteredPasskey) async throws -> Created
    ) async throws -> (passkey: PasskeyRecord, created: Created) {
        let registered = try await register(
            answer, friendlyName: nil, in: project,
            admitting: {
                if case .newUser = $0 { true } else { false }
            },
            proving: { work, registrant, registered in
                guard case .newUser(let signUp) = registrant else { throw Self.unissued }
                return try await creating(work, signUp, registered)
            })
        return (registered.passkey, registered.proof)
    }

    /// The options of a sign-in: for `userId`, naming their passkeys in `allowCredentials`; for nobody (nil), a
    /// discoverable sign-in whose answer's `userHandle` names the user. `only` narrows a named user's list to one of
    /// their passkeys (a face's challenge for one factor), and the answer must then come from that passkey (WebAuthn
    /// §7.2 step 5).
    ///
    /// - Parameter sessionClaims: Claims the sign-in's session is to carry, checked already
    ///   (``SessionService/requestedClaims(_:dialect:)``).
    func authenticationOptions(
        userId: String?, sessionClaims: [String: JSONValue]? = nil, in project: Project,
        context: PasskeyCeremonyContext = .project, only passkeyId: String? = nil
    ) async throws -> PasskeyRequestOptions {
        try await requestOptions(
            .authentication, userId: userId, only: passkeyId, sessionClaims: sessionClaims, in: project, context)
    }

    /// The options of a sign-in by the user holding `loginId`, as ``authenticationOptions(userId:in:)`` gives them;
    /// nil, or a login id nobody holds, gets a discoverable sign-in's (an answer then names its user by its
    /// `userHandle`, so naming a login id proves nothing by itself). The `sessionClaims` are checked as a code sign-in's
    /// (`invalid_claims`) and carried by the session the answer opens.
    func authenticationOptions(loginId: String?, sessionClaims: [String: JSONValue]? = nil, in project: Project)
        async throws -> PasskeyRequestOptions
    {
        let claims = try SessionService.requestedClaims(sessionClaims, dialect: nil)
        var userId: String?
        if let loginId { userId = try await sessions.users.findUser(loginId: loginId, in: project)?.id }
        return try await authenticationOptions(userId: userId, sessionClaims: claims, in: project)
    }

    private func requestOptions(
        _ ceremony: Ceremony, userId: String?, only passkeyId: String? = nil, sessionClaims: [String: JSONValue]?,
        in project: Project, _ context: PasskeyCeremonyContext = .project
    ) async throws -> PasskeyRequestOptions {
        let relyingParty = try Self.relyingParty(of: project, context)
        var allowed: [PasskeyRecord] = []
        if let userId { allowed = try await store.passkeys(userId: userId, projectId: project.id) }
        if let passkeyId { allowed = allowed.filter { $0.id == passkeyId } }
        let challenge = try await issueChallenge(
            ceremony, userId: userId, passkeyId: passkeyId, sessionClaims: sessionClaims, in: project, context)
        return relyingParty.requestOptions(
            challenge: challenge,
            allowed: allowed.map {
                PasskeyCredentialDescriptor(id: $0.credential.credentialID, transports: $0.transports)
            })
    }

    /// Checks a sign-in answer: its challenge (spent first, issued for a sign-in), the passkey it names (the named
    /// user's, or the `userHandle`'s in a discoverable sign-in), and the relying party's checks; the counter and BS
    /// are recorded. A counter that does not rise is refused. A face's context binds the answer to its transaction,
    /// and `recording` writes the face's own record of the approval in the same unit of work.
    func authenticate(
        _ answer: PasskeyAssertionAnswer, in project: Project, context: PasskeyCeremonyContext = .project,
        recording: (@Sendable (PasskeyRecord, UnitOfWork) async throws -> Void)? = nil
    ) async throws -> (passkey: PasskeyRecord, assertion: VerifiedAssertion) {
        try await verify(answer, ceremony: .authentication, in: project, context) { passkey, assertion, _, work in
            try await recording?(passkey, work)
            return (passkey, assertion)
        }
    }

    /// Signs in with a passkey: checks the answer as ``authenticate(_:in:)`` does and opens a session for the
    /// passkey's user in the same unit of work, so the spent challenge, the recorded counter and the session commit
    /// together. The session's `amr` and `acr` are the assertion's (``VerifiedAssertion/amr``); its token is worded
    /// in `dialect` (Verity's when nil). A disabled user is refused with `userDisabled`.
    func signIn(_ answer: PasskeyAssertionAnswer, dialect: SessionTokenDialect? = nil, in project: Project)
        async throws -> AuthResponse
    {
        let opened = try await verify(answer, ceremony: .authentication, in: project) {
            passkey, assertion, claims, work in
            try await sessions.open(
                userId: passkey.userId, amr: assertion.amr, acr: assertion.acr, claims: claims ?? [:], in: project,
                in: work)
        }
        return try await sessions.answer(opened, dialect: dialect, in: project)
    }

    /// The options of a step-up of the signed-in session `auth`: a challenge bound to its user, naming their passkeys
    /// in `allowCredentials`.
    ///
    /// - Parameter sessionClaims: Claims to join the session's once it is stepped up, checked already
    ///   (``SessionService/requestedClaims(_:dialect:)``).
    func stepUpOptions(for auth: SessionAuth, sessionClaims: [String: JSONValue]? = nil, in project: Project)
        async throws -> PasskeyRequestOptions
    {
        try await requestOptions(.stepUp, userId: auth.user.id, sessionClaims: sessionClaims, in: project)
    }

    /// Steps the session `auth` up with a passkey of its user: the answer is checked like a sign-in's, against a
    /// challenge issued by ``stepUpOptions(for:in:)`` to the same user, and the session gains the assertion's `amr`
    /// (`acr: mfa` when the user was verified or the passkey is now a second factor), in the same unit of work. Its
    /// token is worded in `dialect` (Verity's when nil). Another user's passkey is refused.
    ///
    /// - Parameter issuingRefreshToken: Also gives the session one more refresh token, for a client whose step-up
    ///   answer must carry one (see ``SessionService/recordStepUp(_:methods:provenACR:claims:issuingRefreshToken:in:in:)``).
    func stepUp(
        _ answer: PasskeyAssertionAnswer, for auth: SessionAuth, issuingRefreshToken: Bool = false,
        dialect: SessionTokenDialect? = nil, in project: Project
    ) async throws -> AuthResponse {
        let steppedUp = try await verify(answer, ceremony: .stepUp, userId: auth.user.id, in: project) {
            _, assertion, claims, work in
            try await sessions.recordStepUp(
                auth, methods: assertion.amr, provenACR: assertion.acr, claims: claims,
                issuingRefreshToken: issuingRefreshToken, in: project, in: work)
        }
        return try await sessions.answer(steppedUp, dialect: dialect, in: project)
    }

    /// Checks an assertion answer for `ceremony` and runs `complete` with the passkey, the verified assertion and the
    /// session claims the challenge holds, in the same unit of work: the challenge is spent first (issued for `ceremony`, and to `userId` when given), then
    /// the passkey it names (the challenge's user's, or the `userHandle`'s when the challenge named nobody) and the
    /// relying party's checks; the counter and BS are recorded. A refusal commits the spent challenge (and the
    /// security event of a counter that did not rise) and throws; an error `complete` throws commits nothing. The
    /// challenge must be the context's transaction's, and one that allows a single passkey is answered by it only.
    private func verify<T: Sendable>(
        _ answer: PasskeyAssertionAnswer, ceremony: Ceremony, userId: String? = nil, in project: Project,
        _ context: PasskeyCeremonyContext = .project,
        then complete:
            @Sendable (PasskeyRecord, VerifiedAssertion, [String: JSONValue]?, UnitOfWork) async throws
            -> T
    ) async throws -> T {
        let relyingParty = try Self.relyingParty(of: project, context)
        let now = clock.now()
        let challenge = try Self.challenge(in: answer.clientDataJSON)
        let outcome = try await store.unitOfWork { work in
            try await Result<T, PasskeyRefusal>(ceremony: {
                guard
                    let binding = try await store.consumeChallenge(
                        hash: Self.hash(challenge), ceremony: ceremony.rawValue, projectId: project.id, now: now,
                        in: work),
                    userId == nil || binding.userId == userId, binding.transaction == context.transaction
                else { throw Self.unissued }
                guard
                    let passkey = try await store.passkey(
                        credentialID: answer.credentialID, projectId: project.id, in: work),
                    passkey.userId
                        == (binding.userId ?? answer.userHandle.map { String(decoding: $0, as: UTF8.self) }),
                    binding.passkeyId == nil || binding.passkeyId == passkey.id
                else { throw PasskeyRefusal.wrongCredential }
                let assertion: VerifiedAssertion
                do throws(PasskeyRefusal) {
                    assertion = try relyingParty.verifyAssertion(
                        answer, challenge: challenge, credential: passkey.credential)
                } catch {
                    if error == .counterRegressed { try await recordCounterRegression(of: passkey, at: now, in: work) }
                    throw error
                }
                guard
                    try await store.recordUse(
                        id: passkey.id, signCount: assertion.signCount, backedUp: assertion.backedUp,
                        projectId: project.id, now: now, in: work)
                else {
                    try await recordCounterRegression(of: passkey, at: now, in: work)
                    throw PasskeyRefusal.counterRegressed
                }
                return try await complete(passkey, assertion, binding.sessionClaims, work)
            })
        }
        switch outcome {
        case .failure(let refusal): throw refusal.verityError
        case .success(let result): return result
        }
    }

    /// Records the security event of a counter that did not rise, in the unit of work that spends the challenge, so
    /// the refusal and its event commit together.
    private func recordCounterRegression(of passkey: PasskeyRecord, at now: Date, in work: UnitOfWork) async throws {
        try await store.recordCounterRegression(eventId: identifiers.make("sev"), passkey: passkey, at: now, in: work)
        logger.warning(
            "Passkey counter went backwards",
            metadata: ["user": "\(passkey.userId)", "passkey": "\(passkey.id)", "project": "\(passkey.projectId)"])
    }

    /// The passkeys of `userId`, oldest first.
    func passkeys(userId: String, in project: Project) async throws -> [PasskeyRecord] {
        try await store.passkeys(userId: userId, projectId: project.id)
    }

    /// Renames the passkey `id` of `userId`.
    func rename(id: String, userId: String, to name: String, in project: Project) async throws {
        let name = try Self.friendlyName(name)
        guard try await store.rename(id: id, userId: userId, projectId: project.id, to: name) else {
            throw VerityError(.factorNotFound, "The user has no such passkey.")
        }
    }

    /// Deletes the passkey `id` of `userId`: its assertions are refused from now on. In the caller's unit of work
    /// when given (a face deleting its own record of the passkey with it).
    func delete(id: String, userId: String, in project: Project, in work: UnitOfWork? = nil) async throws {
        guard try await store.delete(id: id, userId: userId, projectId: project.id, in: work) else {
            throw VerityError(.factorNotFound, "The user has no such passkey.")
        }
        logger.info("Passkey deleted", metadata: ["user": "\(userId)", "passkey": "\(id)", "project": "\(project.id)"])
    }

    // MARK: - Challenges

    /// The transaction a face bound the challenge of this answer's client data to, while the challenge is unused and
    /// unexpired; nil otherwise. It spends nothing: the face learns which of its ceremonies is answered, then checks
    /// the answer with ``register(_:friendlyName:for:in:context:recording:)`` or
    /// ``authenticate(_:in:context:recording:)``.
    func transaction(answering clientDataJSON: Data, in project: Project) async throws -> String? {
        let challenge = try Self.challenge(in: clientDataJSON)
        return try await store.challengeTransaction(hash: Self.hash(challenge), projectId: project.id, now: clock.now())
    }

    /// A new 32-byte challenge for `ceremony`, bound to `userId` (nil: a sign-in that named nobody) or to the user a
    /// `signUp` will create, to `passkeyId` when it allows one passkey only, and to the context's transaction.
    private func issueChallenge(
        _ ceremony: Ceremony, userId: String?, signUp: PasskeySignUp? = nil, passkeyId: String? = nil,
        sessionClaims: [String: JSONValue]? = nil, in project: Project, _ context: PasskeyCeremonyContext = .project
    ) async throws -> [UInt8] {
        let relyingParty = try Self.relyingParty(of: project, context)
        let now = clock.now()
        let challenge = identifiers.random.bytes(count: 32)
        try await store.insertChallenge(
            hash: Self.hash(challenge), ceremony: ceremony.rawValue, userId: userId, signUp: signUp,
            passkeyId: passkeyId, transaction: context.transaction, sessionClaims: sessionClaims,
            projectId: project.id,
            expiresAt: now.addingTimeInterval(TimeInterval(relyingParty.settings.challengeLifetime)), now: now)
        return challenge
    }

    /// Refuses a ceremony started from an origin the project does not allow, for a client that names its origin when
    /// it starts (Descope's start bodies); none named says nothing, and the answer's client data is checked anyway.
    static func requireOrigin(_ origin: String?, in project: Project) throws {
        guard let origin else { return }
        guard try relyingParty(of: project).allows(origin: origin) else {
            throw PasskeyRefusal.originNotAllowed.verityError
        }
    }

    /// Refuses an answer whose client data does not name the challenge `transaction` (its base64url), for a client
    /// that names its ceremony apart from the answer (Descope's `transactionId`): an answer to another ceremony's
    /// challenge is refused as one to a challenge never issued.
    static func requireAnswer(_ clientDataJSON: Data, to transaction: String) throws {
        let challenge = try challenge(in: clientDataJSON)
        guard CodeGenerator.constantTimeEquals(Base64URL.encode(challenge), transaction) else { throw unissued }
    }

    /// A registration of a credential id the relying party has already.
    static let credentialTaken = VerityError(.conflict, "This credential is registered already.")

    static let unissued = VerityError(
        .challengeNotFound, "The answer is for a challenge this server did not issue, or one already used or expired.")

    /// How a challenge is stored: the SHA-256 of its base64url form.
    static func hash(_ challenge: [UInt8]) -> String {
        SecretHash.hex(Base64URL.encode(challenge))
    }

    /// The challenge the client data names; the relying party checks it again with the rest.
    static func challenge(in clientDataJSON: Data) throws -> [UInt8] {
        struct Named: Decodable { var challenge: String }
        guard let named = try? JSONDecoder().decode(Named.self, from: clientDataJSON),
            let challenge = Base64URL.decode(named.challenge), !challenge.isEmpty
        else { throw PasskeyRefusal.malformed("clientDataJSON names no challenge").verityError }
        return challenge
    }

    /// The relying party of a ceremony: the context's when it brings one, else the project's.
    static func relyingParty(of project: Project, _ context: PasskeyCeremonyContext = .project) throws
        -> PasskeyRelyingParty
    {
        guard let settings = context.settings ?? project.settings.passkeys else {
            throw VerityError(.forbidden, "This project offers no passkeys.")
        }
        return PasskeyRelyingParty(settings: settings)
    }

    /// A passkey's name, trimmed: 1 to ``friendlyNameLimit`` characters on one line.
    static func friendlyName(_ name: String) throws -> String {
        guard let trimmed = name.trimmedLine(of: 1...friendlyNameLimit) else {
            throw VerityError(.invalidRequest, "A passkey's name has 1 to \(friendlyNameLimit) characters.")
        }
        return trimmed
    }
}
