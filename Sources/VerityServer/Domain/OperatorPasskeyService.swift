import Foundation
import Logging
import VerityCore

/// Console operators' passkeys: registering them from a signed-in session, listing, renaming and deleting them, and
/// signing in with one after a one-time link instead of (or besides) a TOTP code.
///
/// Operators belong to the server, not to a project, so the console has one relying party of its own, made from the
/// public URL (``relyingParty(publicURL:)``): its host is the relying-party id and its origin the only origin. The
/// WebAuthn checks are ``PasskeyRelyingParty``'s, as for projects; challenges are single use, bound to the ceremony,
/// the operator and (for a sign-in) the link, and live ``challengeLifetime`` seconds.
struct OperatorPasskeyService: Sendable {
    /// How long a ceremony's challenge may be answered.
    static let challengeLifetime = 300

    private let store: OperatorPasskeyStore
    private let operators: OperatorService
    /// The console's relying party; nil when the public URL has no host a browser could scope a passkey to.
    let relyingParty: PasskeyRelyingParty?
    let identifiers: Identifiers
    let clock: any TimeSource
    let logger: Logger

    init(
        store: OperatorPasskeyStore, operators: OperatorService, publicURL: String, identifiers: Identifiers,
        clock: any TimeSource, logger: Logger
    ) {
        self.store = store
        self.operators = operators
        self.relyingParty = Self.relyingParty(publicURL: publicURL)
        self.identifiers = identifiers
        self.clock = clock
        self.logger = logger
    }

    /// The console's relying party for the server reached at `publicURL`: the URL's host as the relying-party id,
    /// its origin (scheme, host and port) as the one allowed origin, user verification required (a console passkey
    /// stands in for a TOTP code and a device both), resident keys preferred. Nil without a host.
    static func relyingParty(publicURL: String) -> PasskeyRelyingParty? {
        guard let components = URLComponents(string: publicURL), let scheme = components.scheme,
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        var settings = PasskeySettings(
            rpID: host, rpName: "Verity console",
            origins: ["\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"])
        settings.userVerification = .required
        settings.challengeLifetime = challengeLifetime
        return PasskeyRelyingParty(settings: settings)
    }

    /// Refuses a ceremony asked for by a page on another origin than the console's (`origin` is the request's
    /// `Origin` header): the browser would refuse it, or bind the answer to an origin the check then refuses.
    func checkOrigin(_ origin: String?) throws -> PasskeyRelyingParty {
        let relyingParty = try available()
        guard let origin, relyingParty.allows(origin: origin) else {
            throw VerityError(
                PasskeyRefusal.originNotAllowed.verityError.code,
                "This page is not on the console's public URL, the one origin console passkeys work on.")
        }
        return relyingParty
    }

    // MARK: - Registration

    /// The options of a registration for the signed-in operator, naming the passkeys they hold in
    /// `excludeCredentials`.
    func registrationOptions(for session: ConsoleSessionRecord) async throws -> PasskeyCreationOptions {
        let relyingParty = try available()
        let existing = try await store.passkeys(operatorId: session.operatorId)
        let challenge = try await issueChallenge(.registration, operatorId: session.operatorId, linkHash: nil)
        return relyingParty.creationOptions(
            challenge: challenge, userHandle: Data(session.operatorId.utf8), userName: session.operatorName,
            userDisplayName: session.operatorName, existing: existing.map(Self.descriptor))
    }

    /// Checks a registration answer against a challenge issued to the signed-in operator, keeps the passkey and
    /// audits it. A credential id the server has already is refused with `conflict`.
    func register(_ answer: PasskeyRegistrationAnswer, friendlyName: String?, for session: ConsoleSessionRecord)
        async throws -> PasskeyRecord
    {
        let relyingParty = try available()
        let name = try PasskeyService.friendlyName(friendlyName ?? "Passkey")
        let now = clock.now()
        let challenge = try PasskeyService.challenge(in: answer.clientDataJSON)
        let outcome = try await store.unitOfWork { work in
            try await Result<PasskeyRecord, PasskeyRefusal>(ceremony: {
                guard
                    let binding = try await store.consumeChallenge(
                        hash: PasskeyService.hash(challenge),
                        ceremony: PasskeyService.Ceremony.registration.rawValue, now: now, in: work),
                    binding.operatorId == session.operatorId
                else { throw PasskeyService.unissued }
                let passkey = PasskeyRecord(
                    id: identifiers.make("pky"), projectId: "", userId: session.operatorId,
                    registered: try await relyingParty.verifyRegistration(answer, challenge: challenge, now: now),
                    friendlyName: name, createdAt: now)
                guard try await store.insert(passkey, in: work) else { throw PasskeyService.credentialTaken }
                return passkey
            })
        }
        switch outcome {
        case .failure(let refusal):
            try await operators.audit(session, "operator.passkey.refused", target: refusal.verityError.auditNote)
            throw refusal.verityError
        case .success(let passkey):
            try await operators.audit(session, "operator.passkey.registered", target: "\(passkey.id) \(name)")
            logger.info(
                "Console passkey registered",
                metadata: ["operator": "\(session.operatorId)", "passkey": "\(passkey.id)"])
            return passkey
        }
    }

    /// The operator's passkeys, oldest first.
    func passkeys(of session: ConsoleSessionRecord) async throws -> [PasskeyRecord] {
        try await store.passkeys(operatorId: session.operatorId)
    }

    /// Renames the signed-in operator's passkey `id`.
    func rename(id: String, to name: String, for session: ConsoleSessionRecord) async throws {
        let name = try PasskeyService.friendlyName(name)
        guard try await store.rename(id: id, operatorId: session.operatorId, to: name) else {
            throw VerityError(.factorNotFound, "You have no such passkey.")
        }
        try await operators.audit(session, "operator.passkey.renamed", target: "\(id) \(name)")
    }

    /// Deletes the signed-in operator's passkey `id`: its assertions are refused from now on.
    func delete(id: String, for session: ConsoleSessionRecord) async throws {
        guard try await store.delete(id: id, operatorId: session.operatorId) else {
            throw VerityError(.factorNotFound, "You have no such passkey.")
        }
        try await operators.audit(session, "operator.passkey.deleted", target: id)
        logger.info("Console passkey deleted", metadata: ["operator": "\(session.operatorId)", "passkey": "\(id)"])
    }

    // MARK: - Signing in

    /// The options of a sign-in with the link `linkToken`: a challenge bound to the link and its operator, naming
    /// their passkeys in `allowCredentials`.
    func signInOptions(linkToken: String) async throws -> PasskeyRequestOptions {
        let relyingParty = try available()
        guard let linkHash = OperatorService.linkHash(of: linkToken),
            let consoleOperator = try await operators.linkOperator(linkToken)
        else { throw OperatorService.SignInRefusal.invalidLink }
        let passkeys = try await store.passkeys(operatorId: consoleOperator.id)
        guard !passkeys.isEmpty else {
            throw VerityError(.factorNotFound, "This operator has no passkey: sign in with the link (and TOTP code).")
        }
        let challenge = try await issueChallenge(.authentication, operatorId: consoleOperator.id, linkHash: linkHash)
        return relyingParty.requestOptions(challenge: challenge, allowed: passkeys.map(Self.descriptor))
    }

    /// Checks a sign-in answer (its challenge, spent first, issued for this link; the passkey it names, the link's
    /// operator's; the relying party's checks; a counter that rises) and opens a session with the link, all in one
    /// unit of work; returns the secret for the session cookie. A refusal is audited; a refused answer still spends
    /// its challenge, and the link stays usable for another try until it expires.
    func signIn(linkToken: String, answer: PasskeyAssertionAnswer, clientAddress: String? = nil) async throws
        -> (token: String, session: ConsoleSession)
    {
        let relyingParty = try available()
        guard let linkHash = OperatorService.linkHash(of: linkToken),
            let consoleOperator = try await operators.linkOperator(linkToken)
        else { throw OperatorService.SignInRefusal.invalidLink }
        let now = clock.now()
        let challenge = try PasskeyService.challenge(in: answer.clientDataJSON)
        let outcome = try await store.unitOfWork { work in
            try await Result<(token: String, session: ConsoleSession), PasskeyRefusal>(ceremony: {
                guard
                    let binding = try await store.consumeChallenge(
                        hash: PasskeyService.hash(challenge),
                        ceremony: PasskeyService.Ceremony.authentication.rawValue, now: now, in: work),
                    binding.operatorId == consoleOperator.id, binding.linkHash == linkHash
                else { throw PasskeyService.unissued }
                guard let passkey = try await store.passkey(credentialID: answer.credentialID, in: work),
                    passkey.userId == consoleOperator.id
                else { throw PasskeyRefusal.wrongCredential }
                let assertion = try relyingParty.verifyAssertion(
                    answer, challenge: challenge, credential: passkey.credential)
                guard
                    try await store.recordUse(
                        id: passkey.id, signCount: assertion.signCount, backedUp: assertion.backedUp, now: now,
                        in: work)
                else { throw PasskeyRefusal.counterRegressed }
                guard
                    let opened = try await operators.openSession(
                        linkHash: linkHash, for: consoleOperator, now: now, in: work)
                else { throw OperatorService.SignInRefusal.invalidLink }
                return opened
            })
        }
        switch outcome {
        case .failure(let refusal):
            try await operators.audit(
                consoleOperator,
                refusal == .counterRegressed
                    ? "operator.sign_in.passkey_counter_regressed" : "operator.sign_in.passkey_refused",
                clientAddress: clientAddress, note: refusal.verityError.auditNote)
            logger.notice("Console sign-in refused: passkey answer", metadata: ["operator": "\(consoleOperator.id)"])
            throw refusal.verityError
        case .success(let opened):
            try await operators.signedIn(opened.session, "operator.sign_in.passkey")
            return opened
        }
    }

    // MARK: - Challenges

    private func available() throws -> PasskeyRelyingParty {
        guard let relyingParty else {
            throw VerityError(.forbidden, "Console passkeys need VERITY_PUBLIC_URL with a host name.")
        }
        return relyingParty
    }

    /// A new 32-byte challenge for `ceremony`, bound to the operator (and, for a sign-in, to the link).
    private func issueChallenge(_ ceremony: PasskeyService.Ceremony, operatorId: String, linkHash: String?)
        async throws -> [UInt8]
    {
        let now = clock.now()
        let challenge = identifiers.random.bytes(count: 32)
        try await store.insertChallenge(
            hash: PasskeyService.hash(challenge), ceremony: ceremony.rawValue, operatorId: operatorId,
            linkHash: linkHash, expiresAt: now.addingTimeInterval(TimeInterval(Self.challengeLifetime)), now: now)
        return challenge
    }

    private static func descriptor(_ passkey: PasskeyRecord) -> PasskeyCredentialDescriptor {
        PasskeyCredentialDescriptor(id: passkey.credential.credentialID, transports: passkey.transports)
    }
}

extension VerityError {
    /// The code and the reason, as the audit trail notes a refusal.
    fileprivate var auditNote: String {
        "\(code.rawValue): \(detail ?? "")"
    }
}
