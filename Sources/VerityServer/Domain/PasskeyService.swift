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
    let runtime: Runtime

    init(store: PasskeyStore, runtime: Runtime) {
        self.store = store
        self.runtime = runtime
    }

    /// The options of a registration for the signed-in `user`, naming the passkeys they hold in `excludeCredentials`.
    func registrationOptions(for user: User, in project: Project) async throws -> PasskeyCreationOptions {
        let relyingParty = try Self.relyingParty(of: project)
        let existing = try await store.passkeys(userId: user.id, projectId: project.id)
        let challenge = try await issueChallenge(.registration, userId: user.id, in: project)
        let name = user.loginIds.first ?? user.id
        return relyingParty.creationOptions(
            challenge: challenge, userHandle: Data(user.id.utf8), userName: name,
            userDisplayName: user.displayName ?? name,
            existing: existing.map {
                PasskeyCredentialDescriptor(id: $0.credential.credentialID, transports: $0.transports)
            })
    }

    /// Checks a registration answer against a challenge issued to `user` for a registration, and keeps the passkey.
    /// A credential id the project has already is refused with `conflict`.
    func register(
        _ answer: PasskeyRegistrationAnswer, friendlyName: String?, for user: User, in project: Project
    ) async throws -> PasskeyRecord {
        let relyingParty = try Self.relyingParty(of: project)
        let name = try Self.friendlyName(friendlyName ?? "Passkey")
        let now = clock.now()
        let challenge = try Self.challenge(in: answer.clientDataJSON)
        let passkey = try await store.unitOfWork { work in
            guard
                let binding = try await store.consumeChallenge(
                    hash: Self.hash(challenge), ceremony: Ceremony.registration.rawValue, projectId: project.id,
                    now: now, in: work),
                binding.userId == user.id
            else { throw Self.unissued }
            let registered: RegisteredPasskey
            do throws(PasskeyRefusal) {
                registered = try relyingParty.verifyRegistration(answer, challenge: challenge)
            } catch {
                return Result<PasskeyRecord, PasskeyRefusal>.failure(error)
            }
            let passkey = PasskeyRecord(
                id: identifiers.make("pky"), projectId: project.id, userId: user.id, credential: registered.credential,
                backedUp: registered.backedUp, transports: registered.transports, aaguid: registered.aaguid,
                attestationFormat: registered.attestationFormat, friendlyName: name, createdAt: now, lastUsedAt: nil)
            guard try await store.insert(passkey, in: work) else {
                throw VerityError(.conflict, "This credential is registered already.")
            }
            return .success(passkey)
        }
        // The spent challenge commits even when the answer is refused, so no answer is tried twice against it.
        switch passkey {
        case .failure(let refusal): throw refusal.verityError
        case .success(let passkey):
            logger.info(
                "Passkey registered",
                metadata: ["user": "\(user.id)", "passkey": "\(passkey.id)", "project": "\(project.id)"])
            return passkey
        }
    }

    /// The options of a sign-in: for `userId`, naming their passkeys in `allowCredentials`; for nobody (nil), a
    /// discoverable sign-in whose answer's `userHandle` names the user.
    func authenticationOptions(userId: String?, in project: Project) async throws -> PasskeyRequestOptions {
        let relyingParty = try Self.relyingParty(of: project)
        var allowed: [PasskeyRecord] = []
        if let userId { allowed = try await store.passkeys(userId: userId, projectId: project.id) }
        let challenge = try await issueChallenge(.authentication, userId: userId, in: project)
        return relyingParty.requestOptions(
            challenge: challenge,
            allowed: allowed.map {
                PasskeyCredentialDescriptor(id: $0.credential.credentialID, transports: $0.transports)
            })
    }

    /// Checks a sign-in answer: its challenge (spent first, issued for a sign-in), the passkey it names (the named
    /// user's, or the `userHandle`'s in a discoverable sign-in), and the relying party's checks; the counter and BS
    /// are recorded. A counter that does not rise is refused.
    func authenticate(_ answer: PasskeyAssertionAnswer, in project: Project) async throws
        -> (passkey: PasskeyRecord, assertion: VerifiedAssertion)
    {
        let relyingParty = try Self.relyingParty(of: project)
        let now = clock.now()
        let challenge = try Self.challenge(in: answer.clientDataJSON)
        let outcome = try await store.unitOfWork {
            work -> Result<(passkey: PasskeyRecord, assertion: VerifiedAssertion), PasskeyRefusal> in
            guard
                let binding = try await store.consumeChallenge(
                    hash: Self.hash(challenge), ceremony: Ceremony.authentication.rawValue, projectId: project.id,
                    now: now, in: work)
            else { throw Self.unissued }
            guard
                let passkey = try await store.passkey(
                    credentialID: answer.credentialID, projectId: project.id, in: work),
                passkey.userId == (binding.userId ?? answer.userHandle.map { String(decoding: $0, as: UTF8.self) })
            else { return .failure(.wrongCredential) }
            let assertion: VerifiedAssertion
            do throws(PasskeyRefusal) {
                assertion = try relyingParty.verifyAssertion(
                    answer, challenge: challenge, credential: passkey.credential)
            } catch {
                if error == .counterRegressed { try await recordCounterRegression(of: passkey, at: now, in: work) }
                return .failure(error)
            }
            guard
                try await store.recordUse(
                    id: passkey.id, signCount: assertion.signCount, backedUp: assertion.backedUp,
                    projectId: project.id, now: now, in: work)
            else {
                try await recordCounterRegression(of: passkey, at: now, in: work)
                return .failure(.counterRegressed)
            }
            return .success((passkey, assertion))
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

    /// Deletes the passkey `id` of `userId`: its assertions are refused from now on.
    func delete(id: String, userId: String, in project: Project) async throws {
        guard try await store.delete(id: id, userId: userId, projectId: project.id) else {
            throw VerityError(.factorNotFound, "The user has no such passkey.")
        }
        logger.info("Passkey deleted", metadata: ["user": "\(userId)", "passkey": "\(id)", "project": "\(project.id)"])
    }

    // MARK: - Challenges

    /// A new 32-byte challenge for `ceremony`, bound to `userId` (nil: a sign-in that named nobody).
    private func issueChallenge(_ ceremony: Ceremony, userId: String?, in project: Project) async throws -> [UInt8] {
        let relyingParty = try Self.relyingParty(of: project)
        let now = clock.now()
        let challenge = identifiers.random.bytes(count: 32)
        try await store.insertChallenge(
            hash: Self.hash(challenge), ceremony: ceremony.rawValue, userId: userId, projectId: project.id,
            expiresAt: now.addingTimeInterval(TimeInterval(relyingParty.settings.challengeLifetime)), now: now)
        return challenge
    }

    private static let unissued = VerityError(
        .challengeNotFound, "The answer is for a challenge this server did not issue, or one already used or expired.")

    private static func hash(_ challenge: [UInt8]) -> String {
        SecretHash.hex(Base64URL.encode(challenge))
    }

    /// The challenge the client data names; the relying party checks it again with the rest.
    private static func challenge(in clientDataJSON: Data) throws -> [UInt8] {
        struct Named: Decodable { var challenge: String }
        guard let named = try? JSONDecoder().decode(Named.self, from: clientDataJSON),
            let challenge = Base64URL.decode(named.challenge), !challenge.isEmpty
        else { throw PasskeyRefusal.malformed("clientDataJSON names no challenge").verityError }
        return challenge
    }

    static func relyingParty(of project: Project) throws -> PasskeyRelyingParty {
        guard let settings = project.settings.passkeys else {
            throw VerityError(.forbidden, "This project offers no passkeys.")
        }
        return PasskeyRelyingParty(settings: settings)
    }

    private static func friendlyName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...friendlyNameLimit).contains(trimmed.count), !trimmed.contains(where: \.isNewline) else {
            throw VerityError(.invalidRequest, "A passkey's name has 1 to \(friendlyNameLimit) characters.")
        }
        return trimmed
    }
}
