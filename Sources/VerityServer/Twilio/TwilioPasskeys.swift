import Foundation
import VerityCore

/// Verify Passkeys on the Twilio face: passkey factors and challenges of a service's entities, over the Domain's
/// relying party. Each ceremony runs in ``PasskeyService`` under the factor's (or the service's) relying party, its
/// challenge bound to the factor or challenge SID, so an answer finds its Twilio resource and no other.
struct TwilioPasskeys: Sendable {
    private let store: TwilioPasskeyStore
    let passkeys: PasskeyService
    let users: UserService
    let push: TwilioPush
    let random: any RandomSource
    let clock: any TimeSource

    init(
        store: TwilioPasskeyStore, passkeys: PasskeyService, users: UserService, push: TwilioPush,
        random: any RandomSource, clock: any TimeSource
    ) {
        self.store = store
        self.passkeys = passkeys
        self.users = users
        self.push = push
        self.random = random
        self.clock = clock
    }

    /// The longest friendly name, as Twilio's factors have.
    static let friendlyNameLimit = FactorDialect.twilio.friendlyNameLengths.upperBound

    /// An unverified factor for `identity` (its entity is created if it has none) and the creation options its
    /// registration answers. The relying party is `config` over the service's settings: 60393 when the authenticator
    /// criteria are missing from both.
    func createFactor(
        friendlyName: String?, identity: String?, config: TwilioPasskeyConfig.FactorConfig?,
        in service: TwilioServiceRecord, project: Project
    ) async throws -> (TwilioPasskeyFactor, PasskeyCreationOptions) {
        guard let identity, !identity.isEmpty else { throw TwilioError.missingParameter("identity") }
        guard let friendlyName, !friendlyName.isEmpty else { throw TwilioError.missingParameter("friendly_name") }
        guard friendlyName.unicodeScalars.count <= Self.friendlyNameLimit else {
            throw TwilioError.invalidParameter("friendly_name", "at most \(Self.friendlyNameLimit) characters")
        }
        let settings = try (config.map(TwilioPasskeyConfig.init(factorConfig:)) ?? TwilioPasskeyConfig())
            .overlaid(on: service.passkeys).settings()
        let entity = try await push.createEntity(identity: identity, in: service)
        let user = try await user(of: entity.identity, in: service, project: project)
        let sid = TwilioSID.make("YF", random: random)
        let options = try await passkeys.registrationOptions(
            for: user, in: project, context: PasskeyCeremonyContext(settings: settings, transaction: sid))
        let now = clock.now()
        let factor = TwilioPasskeyFactor(
            sid: sid, entity: TwilioEntityAddress(entity, in: project), userId: user.id, passkeyId: nil,
            friendlyName: friendlyName, settings: settings, createdAt: now, updatedAt: now)
        try await store.insert(factor)
        return (factor, options)
    }

    /// Verifies the factor whose registration `answer` answers: the Domain checks it and keeps the passkey, and the
    /// factor becomes that passkey's in the same unit of work. An answer to no factor of this service is a 20404;
    /// one the relying party refuses is a 60311.
    func verifyFactor(_ answer: PasskeyRegistrationAnswer, in service: TwilioServiceRecord, project: Project)
        async throws -> TwilioPasskeyFactor
    {
        let resource = "/Services/\(service.sid)/Passkeys/VerifyFactor"
        guard let sid = try await passkeys.transaction(answering: answer.clientDataJSON, in: project),
            TwilioSID.isValid(sid, prefix: "YF"),
            let factor = try await store.factor(sid: sid, serviceSid: service.sid)
        else { throw TwilioError.notFound(resource) }
        let user = try await users.user(id: factor.userId, in: project)
        let (store, now) = (store, clock.now())
        let passkey = try await Self.translating(refusal: .factorVerificationFailed, resource: resource) {
            try await passkeys.register(
                answer, friendlyName: factor.friendlyName, for: user, in: project,
                context: PasskeyCeremonyContext(settings: factor.settings, transaction: sid)
            ) { passkey, work in
                guard try await store.verify(sid: sid, passkeyId: passkey.id, now: now, in: work) else {
                    throw TwilioError.notFound(resource)
                }
            }
        }
        var verified = factor
        verified.passkeyId = passkey.id
        verified.updatedAt = now
        return verified
    }

    /// A challenge for `identity`, for its verified factor `factorSid` or any of its passkeys, and the request options
    /// the assertion answers.
    func createChallenge(
        identity: String?, factorSid: String?, in service: TwilioServiceRecord, project: Project
    ) async throws -> (TwilioPasskeyChallenge, PasskeyRequestOptions) {
        guard let identity, !identity.isEmpty else { throw TwilioError.missingParameter("identity") }
        guard let entity = try await push.findEntity(identity, in: service),
            let userId = try await store.userId(serviceSid: service.sid, identity: identity)
        else { throw TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)") }
        var factor: TwilioPasskeyFactor?
        if let factorSid {
            guard TwilioSID.isValid(factorSid, prefix: "YF"),
                let found = try await store.factor(sid: factorSid, serviceSid: service.sid),
                found.entity.identity == identity
            else {
                throw TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)/Factors/\(factorSid)")
            }
            guard found.passkeyId != nil else {
                throw VerityError(.factorNotVerified, "The factor's registration has not been answered.")
            }
            factor = found
        }
        let settings = try factor?.settings ?? service.passkeys.settings()
        let sid = TwilioSID.make("YC", random: random)
        let options = try await passkeys.authenticationOptions(
            userId: userId, in: project, context: PasskeyCeremonyContext(settings: settings, transaction: sid),
            only: factor?.passkeyId)
        let now = clock.now()
        let challenge = TwilioPasskeyChallenge(
            sid: sid, entity: TwilioEntityAddress(entity, in: project), factorSid: factor?.sid, status: "pending",
            expiresAt: now.addingTimeInterval(TimeInterval(settings.challengeLifetime)), createdAt: now,
            updatedAt: now)
        try await store.insert(challenge)
        return (challenge, options)
    }

    /// Approves the challenge whose options `answer` answers: the Domain checks the assertion (the entity's passkey,
    /// signature, origin, flags, counter) and the challenge is approved by that passkey's factor in the same unit of
    /// work. An answer to no pending challenge of this service is a 20404; one the relying party refuses is a 60324.
    func approve(_ answer: PasskeyAssertionAnswer, in service: TwilioServiceRecord, project: Project) async throws
        -> TwilioPasskeyChallenge
    {
        let resource = "/Services/\(service.sid)/Passkeys/ApproveChallenge"
        guard let sid = try await passkeys.transaction(answering: answer.clientDataJSON, in: project),
            TwilioSID.isValid(sid, prefix: "YC"),
            let challenge = try await store.challenge(sid: sid, serviceSid: service.sid)
        else { throw TwilioError.notFound(resource) }
        let settings: PasskeySettings
        if let factorSid = challenge.factorSid,
            let factor = try await store.factor(sid: factorSid, serviceSid: service.sid)
        {
            settings = factor.settings
        } else {
            settings = try service.passkeys.settings()
        }
        let (store, now) = (store, clock.now())
        _ = try await Self.translating(refusal: .challengeVerificationFailed, resource: resource) {
            try await passkeys.authenticate(
                answer, in: project, context: PasskeyCeremonyContext(settings: settings, transaction: sid)
            ) { passkey, work in
                // The Domain allowed only the factor's passkey when the challenge names one.
                guard let used = try await store.factor(passkeyId: passkey.id, in: work) else {
                    throw TwilioError.challengeVerificationFailed
                }
                guard try await store.approve(sid: sid, factorSid: used.sid, now: now, in: work) else {
                    throw TwilioError.notFound(resource)
                }
            }
        }
        guard let approved = try await store.challenge(sid: sid, serviceSid: service.sid) else {
            throw TwilioError.notFound(resource)
        }
        return approved
    }

    /// The entity's passkey factor `sid`; nil when the service has no passkey factor of that SID for the entity (it
    /// may be a push or TOTP factor).
    func factor(_ sid: String, identity: String, in service: TwilioServiceRecord) async throws -> TwilioPasskeyFactor? {
        guard TwilioSID.isValid(sid, prefix: "YF"),
            let factor = try await store.factor(sid: sid, serviceSid: service.sid), factor.entity.identity == identity
        else { return nil }
        return factor
    }

    /// Up to `limit` of the entity's passkey factors in creation order, after the factor SID `after`.
    func factors(identity: String, in service: TwilioServiceRecord, after: String?, limit: Int) async throws
        -> [TwilioPasskeyFactor]
    {
        try await store.factors(serviceSid: service.sid, identity: identity, after: after, limit: limit)
    }

    /// Deletes the passkey factor and, once it is verified, its passkey, in one unit of work: the passkey's
    /// assertions are refused from then on. A passkey deleted already (through the native API) leaves only the factor
    /// to delete.
    func deleteFactor(_ factor: TwilioPasskeyFactor, in service: TwilioServiceRecord, project: Project) async throws {
        let (store, passkeys) = (store, passkeys)
        let deleted = try await store.unitOfWork { work in
            guard try await store.deleteFactor(sid: factor.sid, serviceSid: service.sid, in: work) else { return false }
            if let passkeyId = factor.passkeyId {
                do {
                    try await passkeys.delete(id: passkeyId, userId: factor.userId, in: project, in: work)
                } catch let error as VerityError where error.code == .factorNotFound {}
            }
            return true
        }
        guard deleted else {
            throw TwilioError.notFound(
                "/Services/\(service.sid)/Entities/\(factor.entity.identity)/Factors/\(factor.sid)")
        }
    }

    /// Deletes the entity's passkeys, in the unit of work that deletes the entity: its Verity user goes, and with it (by
    /// cascade) its passkeys, their factors and their pending challenges, so an entity created again for the identity
    /// starts with none.
    func deleteEntity(_ identity: String, in service: TwilioServiceRecord, project: Project, in work: UnitOfWork)
        async throws
    {
        guard let userId = try await store.userId(serviceSid: service.sid, identity: identity, in: work) else { return }
        try await users.delete(id: userId, in: project, in: work)
    }

    /// The Verity user behind the entity's passkeys, created with the entity's first passkey factor. It has no login
    /// ids: the entity's identity is the customer's, and its passkeys are used through this face.
    private func user(of identity: String, in service: TwilioServiceRecord, project: Project) async throws -> User {
        if let id = try await store.userId(serviceSid: service.sid, identity: identity) {
            return try await users.user(id: id, in: project)
        }
        let (store, users) = (store, users)
        do {
            let created = try await store.unitOfWork { work -> String in
                let user = try await users.createWithoutLogins(displayName: identity, in: project, in: work)
                guard
                    try await store.insertUser(serviceSid: service.sid, identity: identity, userId: user.id, in: work)
                else { throw UserRace() }
                return user.id
            }
            return try await users.user(id: created, in: project)
        } catch is UserRace {
            // Another request made the entity's user first; this one's was rolled back with its unit of work.
            guard let id = try await store.userId(serviceSid: service.sid, identity: identity) else { throw UserRace() }
            return try await users.user(id: id, in: project)
        }
    }

    /// Runs a Domain ceremony step, and words a refusal of the answer as the face's `refusal`; a spent or unknown
    /// challenge (`challenge_not_found`) stays a 20404 of `resource`, and every other error is the face's usual.
    private static func translating<T: Sendable>(
        refusal: TwilioError, resource: String, _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let error as VerityError where Self.refusals.contains(error.code) {
            throw refusal
        } catch let error as VerityError where error.code == .challengeNotFound {
            throw TwilioError.notFound(resource)
        }
    }

    /// The codes ``PasskeyRefusal`` words a refused answer with.
    private static let refusals: Set<ErrorCode> = [
        .forbidden, .userVerificationRequired, .invalidSignature, .wrongFactor, .invalidPublicKey, .invalidRequest,
    ]

    private struct UserRace: Error {}
}
