import Foundation
import VerityCore

/// The rules of the Verify Push and TOTP face, over Verity's own factors and challenges: Twilio's entities, access
/// tokens, factor verification by signature or code, device JWTs and answers signed over listed fields.
struct TwilioPush: Sendable, UsesRuntime {
    private let store: TwilioPushStore
    private let webhooks: TwilioWebhookStore
    let services: TwilioServiceService
    let factors: FactorService
    let challenges: ChallengeService
    let admin: AdminService
    let webhookAddresses: OutboundAddressPolicy
    let runtime: Runtime

    init(
        store: TwilioPushStore, webhooks: TwilioWebhookStore, services: TwilioServiceService, factors: FactorService,
        challenges: ChallengeService, admin: AdminService, webhookAddresses: OutboundAddressPolicy, runtime: Runtime
    ) {
        self.store = store
        self.webhooks = webhooks
        self.services = services
        self.factors = factors
        self.challenges = challenges
        self.admin = admin
        self.webhookAddresses = webhookAddresses
        self.runtime = runtime
    }

    // MARK: - Services

    /// Deletes the service with everything of it, in one unit of work: its entities and webhooks, its factors with
    /// the Verity factors behind them (their pending challenges expire now), and its access tokens with their
    /// enrollment tokens. Its verifications stay in the project, out of reach of the face, and expire on their own.
    func deleteService(_ sid: String, in project: Project) async throws {
        let (store, services, factors) = (store, services, factors)
        try await store.unitOfWork { work in
            try await services.delete(sid, in: project, in: work)
            let linked = try await store.unlinkFactors(serviceSid: sid, in: work)
            _ = try await factors.delete(ids: linked, projectId: project.id, in: work)
            let tokens = try await store.deleteAccessTokens(serviceSid: sid, projectId: project.id, in: work)
            try await factors.revokeEnrollmentTokens(hashes: tokens, projectId: project.id, in: work)
        }
    }

    // MARK: - Entities

    func createEntity(identity: String, in service: TwilioServiceRecord) async throws -> TwilioEntity {
        try await store.entity(creating: newEntity(try FactorDialect.twilio.validUserId(identity), in: service))
    }

    func entity(_ identity: String, in service: TwilioServiceRecord) async throws -> TwilioEntity {
        guard let entity = try await findEntity(identity, in: service) else {
            throw TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)")
        }
        return entity
    }

    /// The entity of `identity`, if the service has one yet.
    func findEntity(_ identity: String, in service: TwilioServiceRecord) async throws -> TwilioEntity? {
        try await store.entity(serviceSid: service.sid, identity: identity)
    }

    /// One page of the service's entities, after the entity SID `after`.
    func entities(in service: TwilioServiceRecord, after: String?, limit: Int) async throws -> [TwilioEntity] {
        try await store.entities(serviceSid: service.sid, after: after, limit: limit)
    }

    /// Deletes the entity with its factors, in one unit of work; their pending challenges expire now. `also` deletes
    /// what else the face keeps for the entity (its passkeys) in the same unit of work.
    func deleteEntity(
        _ identity: String, in service: TwilioServiceRecord, project: Project,
        also: (@Sendable (UnitOfWork) async throws -> Void)? = nil
    ) async throws {
        let (store, factors) = (store, factors)
        let deleted = try await store.unitOfWork { work in
            try await also?(work)
            let linked = try await store.unlinkFactors(serviceSid: service.sid, identity: identity, in: work)
            _ = try await factors.delete(ids: linked, projectId: project.id, in: work)
            return try await store.deleteEntity(serviceSid: service.sid, identity: identity, in: work)
        }
        guard deleted else {
            throw TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)")
        }
    }

    private func newEntity(_ identity: String, in service: TwilioServiceRecord) -> TwilioEntity {
        let now = clock.now()
        return TwilioEntity(
            sid: TwilioSID.make("YE", random: random), serviceSid: service.sid, identity: identity, createdAt: now,
            updatedAt: now)
    }

    // MARK: - Access tokens

    /// A single-use token for the app to create one push factor for `Identity`, living `Ttl` seconds (the bounds and
    /// default are ``FactorDialect/twilio``'s).
    func createAccessToken(_ form: TwilioForm, in service: TwilioServiceRecord, project: Project) async throws
        -> (TwilioAccessToken, token: String)
    {
        let identity = try form.requiredString("Identity")
        guard try form.requiredString("FactorType") == "push" else {
            throw TwilioError.invalidParameter("FactorType", "only push factors are enrolled with access tokens")
        }
        let name = try form.string("FactorFriendlyName").map {
            try FactorDialect.twilio.validFriendlyName($0, as: "FactorFriendlyName")
        }
        let now = clock.now()
        let enrollment = try await factors.createEnrollmentToken(
            CreateEnrollmentTokenRequest(userId: identity, expiresIn: try form.integer("Ttl")), in: project,
            dialect: .twilio)
        let token = TwilioAccessToken(
            sid: TwilioSID.make("YK", random: random), projectId: project.id, serviceSid: service.sid,
            identity: identity, factorFriendlyName: name, tokenHash: SecretHash.hex(enrollment.token),
            ttl: Int(enrollment.expiresAt.timeIntervalSince(now).rounded()), createdAt: now)
        try await store.insert(token)
        return (token, enrollment.token)
    }

    func accessToken(_ sid: String, in service: TwilioServiceRecord) async throws -> TwilioAccessToken {
        guard TwilioSID.isValid(sid, prefix: "YK"),
            let token = try await store.accessToken(sid: sid, serviceSid: service.sid)
        else { throw TwilioError.notFound("/Services/\(service.sid)/AccessTokens/\(sid)") }
        return token
    }

    // MARK: - Factors

    /// The device's enrollment: a push factor bound to its P-256 key, created with an access token (used once).
    func enrollPush(_ form: TwilioForm, accessToken: String, identity: String, serviceSid: String)
        async throws -> (FactorRecord, TwilioFactorLink, TwilioServiceRecord, Project)
    {
        guard let accessToken = try? FactorService.wellFormedEnrollmentToken(accessToken),
            let token = try await store.accessToken(hash: SecretHash.hex(accessToken)),
            token.serviceSid == serviceSid, token.identity == identity,
            let project = try await admin.findProject(id: token.projectId),
            try await factors.isEnrollmentOpen(tokenHash: token.tokenHash)
        else { throw TwilioError.authenticationFailed }
        let service = try await services.service(serviceSid, in: project)
        guard try form.requiredString("FactorType") == "push" else {
            throw TwilioError.invalidParameter("FactorType", "an access token enrolls a push factor")
        }
        let (factor, link) = try await createPush(
            form, enrollmentToken: accessToken, identity: identity, defaultName: token.factorFriendlyName,
            in: service, project: project)
        return (factor, link, service, project)
    }

    /// A push factor the backend creates with its own credentials (Twilio's Create New Factor with
    /// `Binding.PublicKey`): unverified until the device proves its key with `AuthPayload`, as an app's would be.
    func createPushForBackend(
        _ form: TwilioForm, identity: String, in service: TwilioServiceRecord, project: Project
    ) async throws -> (FactorRecord, TwilioFactorLink) {
        let token = try await factors.createEnrollmentToken(
            CreateEnrollmentTokenRequest(userId: identity, expiresIn: nil), in: project, dialect: .twilio)
        return try await createPush(
            form, enrollmentToken: token.token, identity: identity, defaultName: nil, in: service, project: project)
    }

    /// A push factor from the form's `Binding.*`, `Config.*` and `Metadata`, enrolled with `enrollmentToken`.
    private func createPush(
        _ form: TwilioForm, enrollmentToken: String, identity: String, defaultName: String?,
        in service: TwilioServiceRecord, project: Project
    ) async throws -> (FactorRecord, TwilioFactorLink) {
        if let alg = form.string("Binding.Alg"), alg != "ES256" {
            throw TwilioError.invalidParameter("Binding.Alg", "only ES256")
        }
        let platform: PushPlatform =
            switch form.string("Config.NotificationPlatform") ?? "none" {
            case "apn": .apns
            case "fcm": .fcm
            case "none": .none
            default: throw TwilioError.invalidParameter("Config.NotificationPlatform", "apn, fcm or none")
            }
        let name = form.string("FriendlyName") ?? defaultName ?? "Push"
        let metadata = try Self.stringObject(form.string("Metadata"), "Metadata")
        let request = CreatePushFactorRequest(
            publicKey: try form.requiredString("Binding.PublicKey"), friendlyName: name, pushPlatform: platform,
            pushToken: form.string("Config.NotificationToken"), appId: form.string("Config.AppId"),
            sdkVersion: form.string("Config.SdkVersion"), metadata: metadata)
        let enrolled: EnrolledPushFactor
        do {
            enrolled = try await factors.enroll(request, enrollmentToken: enrollmentToken, dialect: .twilio)
        } catch let error as VerityError where error.code == .conflict || error.code == .unauthorized {
            // Used or expired: the token is spent, as a password would be.
            throw TwilioError.authenticationFailed
        } catch let error as VerityError where error.code == .invalidPublicKey {
            throw TwilioError.invalidParameter("Binding.PublicKey", "base64 of a P-256 DER SubjectPublicKeyInfo")
        }
        let link = TwilioFactorLink(
            factorId: enrolled.factor.id, serviceSid: service.sid, identity: identity, updatedAt: clock.now())
        let factor = try await factors.factor(id: enrolled.factor.id, in: project)
        try await store.link(
            link, entity: newEntity(identity, in: service),
            events: events([Self.event("factor.created", factor, link)], service: service))
        return (factor, link)
    }

    /// A TOTP factor created by the backend; its secret and `otpauth://` URI are shown this once.
    func createTOTP(_ form: TwilioForm, identity: String, in service: TwilioServiceRecord, project: Project)
        async throws -> (FactorRecord, TwilioFactorLink, CreatedTOTPFactor)
    {
        let name = form.string("FriendlyName") ?? identity
        let secret = try form.string("Binding.Secret").map { text in
            guard let bytes = Base32.decode(text.uppercased()), !bytes.isEmpty else {
                throw TwilioError.invalidParameter("Binding.Secret", "base32")
            }
            return bytes
        }
        let created: CreatedTOTPFactor
        let skew: Int
        do {
            skew = try FactorDialect.twilio.validTOTPWindow(form.integer("Config.Skew") ?? service.totp.skew)
            created = try await factors.createTOTPFactor(
                userId: identity,
                CreateTOTPFactorRequest(
                    friendlyName: name, algorithm: form.string("Config.Alg"),
                    digits: try form.integer("Config.CodeLength") ?? max(6, service.totp.codeLength),
                    issuer: service.totp.issuer ?? service.friendlyName),
                in: project, period: try form.integer("Config.TimeStep") ?? service.totp.timeStep, secret: secret,
                dialect: .twilio)
        } catch let error as VerityError where error.code == .invalidRequest {
            throw TwilioError(code: 60200, message: "Invalid parameter: \(error.detail ?? "")", status: 400)
        }
        let link = TwilioFactorLink(
            factorId: created.factor.id, serviceSid: service.sid, identity: identity, totpSkew: skew,
            updatedAt: clock.now())
        let factor = try await factors.factor(id: created.factor.id, in: project)
        try await store.link(
            link, entity: newEntity(identity, in: service),
            events: events([Self.event("factor.created", factor, link)], service: service))
        return (factor, link, created)
    }

    /// The entity's factor `sid`, if the caller may see it (a device sees only its own).
    func factor(
        _ sid: String, identity: String, in service: TwilioServiceRecord, project: Project, caller: TwilioCaller
    )
        async throws -> (FactorRecord, TwilioFactorLink)
    {
        let notFound = TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)/Factors/\(sid)")
        guard let id = TwilioSID.verityId(sid, prefix: "YF", idPrefix: "fac"),
            let factor = try await factors.findFactor(id: id, in: project),
            let link = try await store.link(factorId: id), link.serviceSid == service.sid, link.identity == identity
        else { throw notFound }
        if case .device(let device) = caller, device.id != factor.id { throw notFound }
        return (factor, link)
    }

    /// One page of the entity's factors the caller may see (a device sees only its own), after the factor SID
    /// `after` names.
    func factors(
        identity: String, in service: TwilioServiceRecord, project: Project, caller: TwilioCaller, after: String?,
        limit: Int
    ) async throws -> [(FactorRecord, TwilioFactorLink)] {
        var only: String?
        if case .device(let device) = caller { only = device.id }
        return try await store.factors(
            serviceSid: service.sid, identity: identity, projectId: project.id, factorId: only,
            after: after.flatMap { TwilioSID.verityId($0, prefix: "YF", idPrefix: "fac") }, limit: limit)
    }

    /// Verifies the factor when `AuthPayload` comes with an unverified one (push: the device's DER signature over
    /// the factor SID; TOTP: the current code), and applies the other settings.
    func updateFactor(
        _ sid: String, _ form: TwilioForm, identity: String, in service: TwilioServiceRecord, project: Project,
        caller: TwilioCaller
    ) async throws -> (FactorRecord, TwilioFactorLink) {
        var (factor, link) = try await factor(sid, identity: identity, in: service, project: project, caller: caller)
        if let payload = form.string("AuthPayload"), factor.status == .unverified {
            let proof: FactorService.Proof =
                switch factor.type {
                case .push: .derSignature(payload, over: Data(sid.utf8))
                case .totp: .totp(payload, window: link.totpWindow)
                }
            let verified = events([Self.event("factor.verified", factor, link)], service: service)
            do {
                factor = try await factors.verify(factor, by: proof) { work in try await verified.enqueue(in: work) }
            } catch let error as VerityError where error.code == .invalidCode {
                throw TwilioError.factorVerificationFailed
            }
        }
        let name = form.string("FriendlyName")
        let pushToken = form.string("Config.NotificationToken")
        if name != nil || pushToken != nil || form.string("Config.SdkVersion") != nil
            || form.string("Config.AppId") != nil
        {
            factor = try await factors.update(
                factor, pushToken: pushToken, friendlyName: name, sdkVersion: form.string("Config.SdkVersion"),
                appId: form.string("Config.AppId"), dialect: .twilio)
            try await store.touchLink(factorId: factor.id, now: clock.now())
        }
        return (factor, link)
    }

    func deleteFactor(
        _ sid: String, identity: String, in service: TwilioServiceRecord, project: Project, caller: TwilioCaller
    )
        async throws
    {
        let (factor, link) = try await factor(sid, identity: identity, in: service, project: project, caller: caller)
        let (store, factors) = (store, factors)
        let queue = events([Self.event("factor.deleted", factor, link)], service: service)
        // The factor, its Twilio side and its event, in one unit of work.
        let deleted = try await store.unitOfWork { work in
            let linked = try await store.unlinkFactor(id: factor.id, in: work)
            guard try await !factors.delete(ids: linked, projectId: project.id, in: work).isEmpty else { return false }
            try await queue.enqueue(in: work)
            return true
        }
        guard deleted else {
            throw TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)/Factors/\(sid)")
        }
    }

    // MARK: - Device authentication

    /// A device JWT as the Twilio Verify SDKs sign it (``DeviceTokenDialect/twilio``), checked by the one rule for
    /// device tokens. Only a factor enrolled through this face (one with a Twilio side) signs in here: a native
    /// Verity factor has its own device protocol and no service or entity.
    func authenticateDevice(token: String) async throws -> (FactorRecord, Project) {
        let factor: FactorRecord
        do {
            factor = try await factors.authenticateDevice(token: token, dialect: .twilio)
        } catch let error as VerityError where error.code == .unauthorized {
            throw TwilioError.authenticationFailed
        }
        guard try await store.link(factorId: factor.id) != nil,
            let project = try await admin.findProject(id: factor.projectId)
        else { throw TwilioError.authenticationFailed }
        return (factor, project)
    }

    // MARK: - Challenges

    /// A challenge for one of the entity's verified factors: pushed to the device, or answered at once by the TOTP
    /// code in `AuthPayload`.
    /// One page of the entity's challenges (those of its factors in this service), filtered by factor and status,
    /// in creation order or the reverse, after the challenge `after` (a Verity id) names.
    func challenges(
        identity: String, in service: TwilioServiceRecord, project: Project, factorId: String?,
        status: ChallengeStatus?, descending: Bool, after: String?, limit: Int
    ) async throws -> [ChallengeRecord] {
        try await store.challenges(
            serviceSid: service.sid, identity: identity, projectId: project.id, factorId: factorId, status: status,
            descending: descending, after: after, limit: limit, now: clock.now())
    }

    func createChallenge(_ form: TwilioForm, identity: String, in service: TwilioServiceRecord, project: Project)
        async throws -> ChallengeRecord
    {
        let (factor, link) = try await factor(
            try form.requiredString("FactorSid"), identity: identity, in: service, project: project, caller: .backend)
        let lifetime = try form.string("ExpirationDate").map { text in
            guard let date = try? Date(text, strategy: .iso8601) else {
                throw TwilioError.invalidParameter("ExpirationDate", "an ISO 8601 date")
            }
            return Int(date.timeIntervalSince(clock.now()).rounded())
        }
        let message = form.string("Details.Message")
        if factor.type == .push, message == nil { throw TwilioError.missingParameter("Details.Message") }
        let details = try form.strings("Details.Fields").map { text in
            guard let field = try? JSONDecoder().decode(ChallengeDetail.self, from: Data(text.utf8)) else {
                throw TwilioError.invalidParameter("Details.Fields", #"each a JSON {"label": …, "value": …}"#)
            }
            return field
        }
        let code = form.string("AuthPayload")
        if factor.type == .totp, code == nil { throw TwilioError.missingParameter("AuthPayload") }
        let created: Challenge
        do {
            created = try await challenges.create(
                CreateChallengeRequest(
                    factorId: factor.id, message: message ?? "Verify with \(factor.friendlyName)",
                    details: details,
                    hiddenDetails: try Self.stringObject(form.string("HiddenDetails"), "HiddenDetails"),
                    expiresIn: lifetime, code: factor.type == .totp ? code : nil),
                in: project, pushStyle: .twilio, totpWindow: link.totpWindow, dialect: .twilio,
                events: answerEvents(factor, link, service: service))
        } catch let error as VerityError where error.code == .invalidCode {
            // A TOTP challenge's code that is not a code at all fails as the challenge's verification.
            throw TwilioError.challengeVerificationFailed
        } catch let error as VerityError where error.code == .invalidRequest {
            throw TwilioError.invalidParameter(error.detail ?? error.code.title)
        }
        return try await challenges.current(id: created.id, in: project)
    }

    /// The entity's challenge `sid`, if the caller may see it (a device sees only its factor's).
    func challenge(
        _ sid: String, identity: String, in service: TwilioServiceRecord, project: Project, caller: TwilioCaller
    )
        async throws -> (ChallengeRecord, FactorRecord)
    {
        let notFound = TwilioError.notFound("/Services/\(service.sid)/Entities/\(identity)/Challenges/\(sid)")
        guard let id = TwilioSID.verityId(sid, prefix: "YC", idPrefix: "chl"),
            let challenge = try? await challenges.current(id: id, in: project),
            let factorSid = challenge.factorId.flatMap({ TwilioSID.sid("YF", verityId: $0) }),
            case let (factor, _)? = try? await factor(
                factorSid, identity: identity, in: service, project: project, caller: caller)
        else { throw notFound }
        return (challenge, factor)
    }

    /// Records a device's answer: a JWS by the factor's key whose claims repeat `expected` (the challenge as the
    /// device fetched it) for every signature field, plus `status` `approved` or `denied`, under the one answer rule
    /// in Twilio's dialect. TOTP challenges were answered by their code when created.
    func answer(
        _ sid: String, authPayload: String, expected: [String: JSONValue], identity: String,
        in service: TwilioServiceRecord, project: Project, caller: TwilioCaller
    ) async throws -> ChallengeRecord {
        let (challenge, factor) = try await challenge(
            sid, identity: identity, in: service, project: project, caller: caller)
        guard let link = try await store.link(factorId: factor.id) else { throw VerityError(.factorNotFound) }
        return try await challenges.answer(
            id: challenge.id, .shownClaims(token: authPayload, shown: expected, dialect: .twilio), factor: factor,
            challenge: challenge, events: answerEvents(factor, link, service: service))
    }

    /// Pushes a pending push challenge to its device again, to be delivered within `lifetime` seconds (`Ttl`).
    func notify(
        _ sid: String, identity: String, lifetime: Int?, in service: TwilioServiceRecord, project: Project
    ) async throws -> (ChallengeRecord, lifetime: Int) {
        let (challenge, factor) = try await challenge(
            sid, identity: identity, in: service, project: project, caller: .backend)
        let lifetime = try await challenges.pushAgain(
            challenge, to: factor, in: project, style: .twilio, lifetime: lifetime, dialect: .twilio)
        return (challenge, lifetime)
    }

    // MARK: - Webhooks

    static let eventTypes: Set = [
        "*", "factor.created", "factor.verified", "factor.deleted", "challenge.approved", "challenge.denied",
    ]

    /// Creates (`sid` nil) or changes a service's webhook from `FriendlyName`, `EventTypes` (repeated),
    /// `WebhookUrl`, `Status` and `Version`.
    ///
    /// Events are signed with the project's webhook signing secret, made now if the project has none yet
    /// (`verity admin twilio` shows it).
    func saveWebhook(_ sid: String?, _ form: TwilioForm, in service: TwilioServiceRecord, project: Project)
        async throws -> TwilioWebhook
    {
        let now = clock.now()
        var webhook: TwilioWebhook
        if let sid {
            webhook = try await self.webhook(sid, in: service)
        } else {
            guard !form.strings("EventTypes").isEmpty else { throw TwilioError.missingParameter("EventTypes") }
            webhook = TwilioWebhook(
                sid: TwilioSID.make("YW", random: random), serviceSid: service.sid,
                friendlyName: try form.requiredString("FriendlyName"), eventTypes: [],
                url: try form.requiredString("WebhookUrl"), enabled: true, version: "v2", createdAt: now,
                updatedAt: now)
        }
        if let name = form.string("FriendlyName") {
            webhook.friendlyName = try FactorDialect.twilio.validFriendlyName(name)
        }
        let types = form.strings("EventTypes")
        if !types.isEmpty {
            guard types.allSatisfy(Self.eventTypes.contains) else {
                throw TwilioError.invalidParameter("EventTypes", Self.eventTypes.sorted().joined(separator: ", "))
            }
            webhook.eventTypes = types
        }
        if let url = form.string("WebhookUrl") {
            guard webhookAddresses.refusal(of: url) == nil else {
                throw TwilioError.invalidParameter(
                    "WebhookUrl",
                    "an absolute http(s) URL of a public address, at most \(OutboundAddressPolicy.maxURLBytes) bytes")
            }
            webhook.url = url
        }
        switch form.string("Status") {
        case nil: break
        case "enabled": webhook.enabled = true
        case "disabled": webhook.enabled = false
        default: throw TwilioError.invalidParameter("Status", "enabled or disabled")
        }
        switch form.string("Version") {
        case nil: break
        case let version? where version == "v1" || version == "v2": webhook.version = version
        default: throw TwilioError.invalidParameter("Version", "v1 or v2")
        }
        webhook.updatedAt = now
        if sid == nil {
            if project.webhookSecret == nil {
                // Only the secret, and only if there is still none: `project` may be older than the row.
                try await admin.ensureWebhookSecret(projectId: project.id)
            }
            try await webhooks.insert(webhook)
        } else if try await !webhooks.update(webhook) {
            throw TwilioError.notFound("/Services/\(service.sid)/Webhooks/\(webhook.sid)")
        }
        return webhook
    }

    func webhook(_ sid: String, in service: TwilioServiceRecord) async throws -> TwilioWebhook {
        guard TwilioSID.isValid(sid, prefix: "YW"),
            let webhook = try await webhooks.webhook(sid: sid, serviceSid: service.sid)
        else { throw TwilioError.notFound("/Services/\(service.sid)/Webhooks/\(sid)") }
        return webhook
    }

    /// Up to `limit` of the service's webhooks in creation order, after the webhook `after`.
    func webhooks(of service: TwilioServiceRecord, after: String?, limit: Int) async throws -> [TwilioWebhook] {
        try await webhooks.webhooks(serviceSid: service.sid, after: after, limit: limit)
    }

    func deleteWebhook(_ sid: String, in service: TwilioServiceRecord) async throws {
        guard TwilioSID.isValid(sid, prefix: "YW"), try await webhooks.delete(sid: sid, serviceSid: service.sid) else {
            throw TwilioError.notFound("/Services/\(service.sid)/Webhooks/\(sid)")
        }
    }

    /// An event as Twilio's Verify Push webhooks carry it (`uuid`, `type` and `sent_at` are added per delivery).
    private static func event(
        _ type: String, _ factor: FactorRecord, _ link: TwilioFactorLink, challenge: ChallengeRecord? = nil
    ) -> TwilioEvent {
        var params = [
            "account_sid": TwilioSID.account(forProject: factor.projectId) ?? "", "service_sid": link.serviceSid,
            "entity_identity": link.identity, "factor_sid": TwilioSID.sid("YF", verityId: factor.id) ?? "",
            "factor_type": factor.type.rawValue, "factor_friendly_name": factor.friendlyName,
            "metadata": json(factor.metadata ?? [:]),
        ]
        if let challenge {
            let details: [String: JSONValue] = [
                "message": .string(challenge.message),
                "fields": .array(
                    challenge.details.map { .object(["label": .string($0.label), "value": .string($0.value)]) }),
            ]
            params["challenge_sid"] = TwilioSID.sid("YC", verityId: challenge.id) ?? ""
            params["challenge_details"] = json(details)
            params["hidden_details"] = json(challenge.hiddenDetails)
            params["status"] = challenge.status.rawValue
            params["updated_date"] = (challenge.respondedAt ?? challenge.createdAt).formatted(TwilioJSON.dateFormat)
        }
        return TwilioEvent(type: type, params: params)
    }

    /// Queues `challenge.approved` or `challenge.denied` for a challenge's answer, by the device (push) or by the code
    /// it was created with (TOTP).
    private func answerEvents(_ factor: FactorRecord, _ link: TwilioFactorLink, service: TwilioServiceRecord)
        -> ChallengeStore.AnswerEvents
    {
        let queue = events([], service: service)
        return { answered, work in
            var queue = queue
            queue.events = [Self.event("challenge.\(answered.status.rawValue)", factor, link, challenge: answered)]
            try await queue.enqueue(in: work)
        }
    }

    /// `events` queued for the service's webhooks, in the transaction of the write they report.
    private func events(_ events: [TwilioEvent], service: TwilioServiceRecord) -> TwilioEventQueue {
        let identifiers = Identifiers(random: random)
        return TwilioEventQueue(
            events: events, serviceSid: service.sid, projectId: service.projectId, now: clock.now(),
            messageId: { identifiers.make("msg") })
    }

    private static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    // MARK: - Parameters

    /// A JSON object of string values inside one form value (`Metadata`, `HiddenDetails`), at most 1024 characters.
    private static func stringObject(_ text: String?, _ parameter: String) throws -> [String: String]? {
        guard let text else { return nil }
        guard text.unicodeScalars.count <= 1024,
            let object = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        else { throw TwilioError.invalidParameter(parameter, "a JSON object of strings, at most 1024 characters") }
        return object
    }
}

extension DeviceTokenDialect {
    /// The Twilio Verify SDKs': `cty` `twilio-pba;v=1`, `kid` is the factor's credential SID (`CR…`), `sub` the
    /// account SID, the window `nbf`…`exp`. The SDKs mint a fresh token per call with no `jti`, so single use cannot
    /// hold there: a token may be replayed within its window (SECURITY.md says so).
    static let twilio = DeviceTokenDialect(
        contentType: "twilio-pba;v=1", factorId: { TwilioSID.verityId($0, prefix: "CR", idPrefix: "fac") },
        subject: { TwilioSID.account(forProject: $0.projectId) }, isSingleUse: false)
}
