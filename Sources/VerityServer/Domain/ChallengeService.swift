import Foundation
import Logging
import VerityCore

/// Push and TOTP challenges: create, deliver, answer once, expire, and tell the backend.
struct ChallengeService: Sendable, UsesRuntime {
    static let defaultLifetime = 300
    /// The longest a challenge waits for its answer.
    static let longestLifetime = 3600
    /// The shortest a native challenge may wait: a push takes a few seconds to arrive and be read.
    static let shortestLifetime = 10
    static let maxWait = 60
    /// Hidden details whose keys start with this (in any case) are Verity's own (``AuthService/stepUpSessionDetail``
    /// binds a step-up to its session): a backend's request may not set them.
    static let reservedDetailPrefix = "verity."

    private let store: ChallengeStore
    let factors: FactorService
    /// Who a report of unusual activity may disable.
    let accounts: UserAccounts
    let runtime: Runtime

    init(
        store: ChallengeStore, factors: FactorService, accounts: UserAccounts, runtime: Runtime
    ) {
        self.store = store
        self.factors = factors
        self.accounts = accounts
        self.runtime = runtime
    }

    // MARK: - Backend

    /// - Parameters:
    ///   - pushStyle: The keys the app reads in the push (the Twilio face's apps read Twilio's).
    ///   - totpWindow: Time steps a TOTP code may be early or late (a Twilio factor's `Config.Skew`).
    ///   - dialect: The protocol the request speaks, for its shortest lifetime (the default and longest are one).
    ///   - reserved: Hidden details only Verity sets (keys under ``reservedDetailPrefix``), added to the request's own
    ///     once those are checked.
    ///   - events: Queues the caller's own events about a TOTP challenge's answer, in the same transaction (as
    ///     ``answer(id:_:factor:challenge:spending:events:)`` does for a push answer).
    func create(
        _ request: CreateChallengeRequest, in project: Project, pushStyle: PushNotification.Style? = nil,
        totpWindow: Int = 1, dialect: FactorDialect = .verity,
        reserved: [String: String] = [:], events: ChallengeStore.AnswerEvents? = nil
    ) async throws -> Challenge {
        let now = clock.now()
        let lifetime = request.expiresIn ?? Self.defaultLifetime
        let shortest = dialect.shortestChallengeLifetime
        guard (shortest...Self.longestLifetime).contains(lifetime) else {
            throw VerityError(
                .invalidRequest, "`expiresIn` must be between \(shortest) and \(Self.longestLifetime) seconds.")
        }
        let message = request.message ?? "Approve sign-in to \(project.name)?"
        let details = request.details ?? []
        var hidden = request.hiddenDetails ?? [:]
        try Self.validate(message: message, details: details, hidden: hidden)
        hidden.merge(reserved) { _, verity in verity }
        // The time shown is the challenge's own, to the second, so the device can hash exactly what it shows.
        let context = try request.context.map {
            var context = try Self.validated($0)
            context.time = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            return context
        }
        let userVerification = request.userVerification ?? .preferred

        let target: (userId: String, factor: FactorRecord?)
        switch (request.factorId, request.userId) {
        case (let factorId?, nil):
            let factor = try await factors.factor(id: factorId, in: project)
            guard factor.status == .verified else {
                throw VerityError(.factorNotVerified, "Factor \(factor.id) must be verified before it gets challenges.")
            }
            try Self.requireUsable(factor, for: userVerification)
            target = (factor.userId, factor)
        case (nil, let userId?):
            target = (try FactorService.validUserId(userId), nil)
        default:
            throw VerityError(.invalidRequest, "Name exactly one of `factorId` or `userId`.")
        }

        var challenge = ChallengeRecord(
            id: identifiers.make("chl"), projectId: project.id, userId: target.userId, factorId: target.factor?.id,
            type: target.factor?.type ?? .push, status: .pending, message: message, details: details,
            hiddenDetails: hidden,
            contentHash: ChallengeSigningPayload.displayedContentHash(
                message: message, details: details.map { ($0.label, $0.value) }, context: context),
            userVerification: userVerification, createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(lifetime)), context: context)

        if let factor = target.factor, factor.type == .totp {
            // A TOTP challenge is answered by the code it comes with.
            guard let code = request.code else {
                throw VerityError(.invalidRequest, "A TOTP challenge needs the user's `code`.")
            }
            let approved = try await factors.checkTOTP(code, factor: factor, window: totpWindow)
            challenge.status = approved ? .approved : .denied
            challenge.respondedAt = now
            challenge.respondedFactorId = factor.id
            try await store.insertAnswered(challenge, now: now, webhook: webhook(for:url:), events: events)
            metrics.challenge(challenge.status, type: .totp)
            outboxSignal.notify()
            return challenge.response(at: now)
        }
        guard request.code == nil else {
            throw VerityError(.invalidRequest, "`code` is only for TOTP factors.")
        }
        let recipients: [FactorRecord]
        if let factor = target.factor {
            recipients = [factor]
        } else {
            let verified = try await factors.verifiedPushFactors(userId: target.userId, in: project)
            guard !verified.isEmpty else {
                throw VerityError(.noVerifiedFactors, "The user has no verified push factor to challenge.")
            }
            // Only factors that can approve it get the push: a `required` challenge needs a user-verification key.
            recipients = verified.filter { (try? Self.requireUsable($0, for: userVerification)) != nil }
            guard !recipients.isEmpty else {
                throw VerityError(
                    .userVerificationRequired,
                    "None of the user's push factors can approve this challenge: each is suspended or, for "
                        + "`userVerification: required`, has no user-verification key.")
            }
        }
        let pushes = try recipients.map { try push(of: challenge, to: $0, in: project, style: pushStyle) }
        try await store.insert(challenge, messages: pushes, now: now)
        metrics.challenge(.pending, type: .push)
        outboxSignal.notify()
        logger.info(
            "Challenge created",
            metadata: ["challenge": "\(challenge.id)", "project": "\(project.id)", "factors": "\(recipients.count)"])
        return challenge.response(at: now)
    }

    /// The challenge; with `wait`, holds the request until it is answered or expires (at most `wait` seconds).
    func fetch(id: String, wait: Int?, in project: Project) async throws -> Challenge {
        guard let wait, wait > 0 else { return try await current(id: id, in: project).response(at: clock.now()) }
        guard wait <= Self.maxWait else {
            throw VerityError(.invalidRequest, "`wait` must be between 0 and \(Self.maxWait) seconds.")
        }
        return try await longPolls.admit(wait: wait) { admitted in
            guard let admitted else { return try await current(id: id, in: project).response(at: clock.now()) }
            return try await poll(id: id, wait: admitted, in: project)
        }
    }

    /// Woken at once by an answer on this node; answers on other nodes are seen by the poll.
    private func poll(id: String, wait: Int, in project: Project) async throws -> Challenge {
        let challenge = try await changes.poll(
            id, from: try await current(id: id, in: project), for: wait,
            until: { $0.status(at: clock.now()) != .pending }, look: { _ in try await current(id: id, in: project) })
        return challenge.response(at: clock.now())
    }

    func current(id: String, in project: Project) async throws -> ChallengeRecord {
        guard let challenge = try await store.challenge(id: id, projectId: project.id) else {
            throw VerityError(.challengeNotFound, "No challenge \(id) in this project.")
        }
        return challenge
    }

    /// Spends an approved challenge on the one thing it approved (a step-up): only for `userId`, only when its hidden
    /// details hold `binding` (the session that asked), only before the challenge expires, and only once.
    func consumeApproval(id: String, userId: String, binding: (key: String, value: String), in project: Project)
        async throws
    {
        guard let challenge = try await store.challenge(id: id, projectId: project.id), challenge.userId == userId,
            challenge.hiddenDetails[binding.key] == binding.value
        else { throw VerityError(.challengeNotFound, "No challenge \(id) for this session.") }
        let now = clock.now()
        switch challenge.status(at: now) {
        case .approved:
            guard try await store.consumeApproval(id: id, projectId: project.id, now: now) else {
                throw challenge.expiresAt <= now
                    ? VerityError(.challengeExpired, "The approval came after the challenge expired; start again.")
                    : VerityError(.challengeAlreadyAnswered, "This approval was already used; start again.")
            }
        case .pending:
            throw VerityError(.challengePending, "The push challenge has not been answered yet; ask again soon.")
        case .denied: throw VerityError(.challengeDenied, "The push challenge was denied on the device.")
        case .expired: throw VerityError(.challengeExpired, "The push challenge expired; start again.")
        }
    }

    // MARK: - Device

    /// The largest page of a device's pending challenges.
    static let maxDevicePage = 50

    /// A page of the pending challenges the factor may answer, newest first, after the challenge `cursor` names.
    func pending(for factor: FactorRecord, cursor: String? = nil, limit: Int? = nil) async throws
        -> Page<DeviceChallenge>
    {
        try Self.requireVerified(factor)
        let limit = try Paging.limit(limit, defaultLimit: Self.maxDevicePage, max: Self.maxDevicePage)
        try Paging.requireCursor(cursor, prefix: "chl_")
        let now = clock.now()
        // One more than asked tells whether there is a next page.
        let found = try await store.pendingChallenges(for: factor, now: now, after: cursor, limit: limit + 1)
        return Page(fetched: found.map { $0.deviceView(for: factor.id, at: now) }, limit: limit, cursor: \.id)
    }

    /// A page of a project's push challenges for its operators, newest first, after the challenge `cursor` names;
    /// only those in `status` and for `factorId` when given.
    func recent(status: ChallengeStatus?, factorId: String?, cursor: String?, in project: Project) async throws
        -> (items: [ChallengeRecord], nextCursor: String?)
    {
        try Paging.requireCursor(cursor, prefix: "chl_")
        let limit = try Paging.limit(nil, max: UserService.maxPageSize)
        let found = try await store.page(
            projectId: project.id, status: status, factorId: factorId, after: cursor, limit: limit + 1)
        let items = Array(found.prefix(limit))
        return (items, found.count > limit ? items.last?.id : nil)
    }

    func deviceChallenge(id: String, for factor: FactorRecord) async throws -> DeviceChallenge {
        try Self.requireVerified(factor)
        let challenge = try await challengeFor(id: id, factor: factor)
        return challenge.deviceView(for: factor.id, at: clock.now())
    }

    /// A device token on the answer route, checked by the one rule for device tokens
    /// (``FactorService/checkDeviceToken(_:dialect:)``), with the challenge `challengeId` read in the same statement
    /// as the factor: nil when the factor's project has no such challenge. The token's use is left to the answer.
    func authenticateAnswer(token: String, challengeId: String) async throws
        -> (factor: FactorRecord, use: FactorService.DeviceTokenUse?, challenge: ChallengeRecord?)
    {
        try await factors.checkDeviceToken(token) { [store] factorId in
            try await store.factorWithChallenge(factorId: factorId, challengeId: challengeId)
        }
    }

    /// Records the device's signed answer. The first valid answer wins; the signature must bind this challenge,
    /// this factor, what was shown and the answer.
    ///
    /// The answer names the key that signed it (``FactorKeyType``): a challenge with `userVerification: required`
    /// is approved only by the user-verification key; `discouraged` and `preferred` take either. A denial may carry a
    /// signed ``DenyReason``, which reports unusual activity: a security event, a webhook and the project's
    /// ``UnusualActivityResponse``, all in the answer's transaction.
    ///
    /// - Parameter challenge: The challenge `id` as ``authenticateAnswer(token:challengeId:)`` read it with the
    ///   factor (nil: the project has none).
    /// - Parameter use: The device token's use, spent with the answer (one write, not two), or alone when the answer
    ///   is refused before it gets that far. Either way a token counts once, and a token spent before is refused as
    ///   `token_replayed`.
    func respond(
        id: String, _ request: RespondChallengeRequest, factor: FactorRecord, challenge: ChallengeRecord?,
        spending use: FactorService.DeviceTokenUse? = nil
    ) async throws -> DeviceChallenge {
        let answered = try await answer(
            id: id, .statements(request), factor: factor, challenge: challenge, spending: use)
        if let reason = request.reason {
            logger.notice(
                "Unusual activity reported",
                metadata: ["challenge": "\(answered.id)", "factor": "\(factor.id)", "reason": "\(reason.rawValue)"])
        }
        return answered.deviceView(for: factor.id, at: clock.now())
    }

    /// Records a device's signed answer, in any device protocol's dialect, under the rules of
    /// ``respond(id:_:factor:challenge:spending:)``: the factor must be verified and not suspended, the challenge its
    /// own, the signature valid, and a `required` challenge is approved only by the user-verification key.
    ///
    /// - Parameter events: Queues the caller's own events about the answer, in the same transaction.
    func answer(
        id: String, _ signed: SignedAnswer, factor: FactorRecord, challenge: ChallengeRecord?,
        spending use: FactorService.DeviceTokenUse? = nil, events: ChallengeStore.AnswerEvents? = nil
    ) async throws -> ChallengeRecord {
        let answer: Answer
        do {
            answer = try checked(signed, to: challenge, id: id, by: factor)
        } catch {
            throw try await factors.refusal(error, spending: use)
        }
        let queued: ChallengeStore.AnswerEvents? =
            switch (answer.report, events) {
            case (let report?, let events?):
                { answered, work in
                    try await report(answered, work)
                    try await events(answered, work)
                }
            case (let one?, nil), (nil, let one?): one
            case (nil, nil): nil
            }
        return try await record(
            answer.status, of: answer.challenge, by: factor, statement: answer.statement, spending: use,
            events: queued)
    }

    /// A device's answer whose signature and statements hold, ready to record.
    private struct Answer {
        var challenge: ChallengeRecord
        var status: ChallengeStatus
        var statement: ChallengeRecord.AnswerStatement
        /// The report of unusual activity a signed deny reason makes, queued with the answer.
        var report: ChallengeStore.AnswerEvents?
    }

    /// What a signed answer states, its signature checked.
    private struct Statements {
        var status: ChallengeAnswer
        var keyType: FactorKeyType
        var statement: ChallengeRecord.AnswerStatement
        var reason: DenyReason?
    }

    /// Checks the device's answer to challenge `id` (`challenge` as read): the factor, the challenge, the answer's
    /// statements and its signature.
    private func checked(
        _ signed: SignedAnswer, to challenge: ChallengeRecord?, id: String, by factor: FactorRecord
    ) throws -> Answer {
        try Self.requireVerified(factor)
        let challenge = try Self.mine(challenge, id: id, factor: factor)
        let stated = try Self.verified(signed, of: challenge, by: factor)
        if stated.status == .approved, challenge.userVerification == .required,
            stated.keyType != .userVerification
        {
            throw VerityError(
                .userVerificationRequired,
                "This challenge must be approved with the user-verification key, after the owner verified.")
        }
        let report: ChallengeStore.AnswerEvents? = stated.reason.map { reason in
            let eventId = identifiers.make("sev")
            let messageId = identifiers.make("msg")
            let now = clock.now()
            return { answered, work in
                try await store.recordUnusualActivity(
                    .init(
                        eventId: eventId, projectId: answered.projectId, userId: answered.userId, factorId: factor.id,
                        challengeId: answered.id, at: now),
                    in: work)
                let applied = try await store.unusualActivityResponse(projectId: answered.projectId, in: work)
                try await respond(to: applied, on: answered, by: factor, in: work)
                try await store.enqueueWebhook(
                    for: answered,
                    webhook: { challenge, url in
                        let event = UnusualActivityEvent(
                            id: eventId, type: "security.\(UnusualActivity.eventType)", createdAt: now,
                            data: .init(
                                securityEventId: eventId, reason: reason, response: applied,
                                factorId: factor.id, challenge: challenge.response(at: now)))
                        return QueuedMessage(
                            id: messageId, channel: .webhook, destination: url, payload: try Self.json(event))
                    }, in: work, now: now)
            }
        }
        return Answer(
            challenge: challenge, status: stated.status == .approved ? .approved : .denied,
            statement: stated.statement, report: report)
    }

    /// Applies the project's response to a report of unusual activity, in the denial's unit of work. Revoking
    /// sessions and disabling the user touch only a Verity user of that id (`usr_…`); for a backend's own user id
    /// they change nothing.
    private func respond(
        to response: UnusualActivityResponse, on challenge: ChallengeRecord, by factor: FactorRecord,
        in work: UnitOfWork
    ) async throws {
        let reason = UnusualActivity.eventType
        switch response {
        case .none: break
        case .revokeSessions:
            try await accounts.endSessions(
                userId: challenge.userId, reason: reason, projectId: challenge.projectId, in: work)
        case .suspendFactor: try await factors.suspend(id: factor.id, in: work)
        case .disableUser:
            try await accounts.disableIfKnown(
                userId: challenge.userId, reason: reason, projectId: challenge.projectId, in: work)
        }
    }

    /// The statements of `signed`, an answer to `challenge` by `factor`, once its signature holds in its dialect.
    private static func verified(_ signed: SignedAnswer, of challenge: ChallengeRecord, by factor: FactorRecord)
        throws -> Statements
    {
        switch signed {
        case .statements(let request):
            let keyType = request.keyType ?? .proofOfPossession
            guard request.status == .denied || request.reason == nil else {
                throw VerityError(.invalidRequest, "Only a denial carries a `reason`.")
            }
            guard keyType == .userVerification || (request.amr == nil && request.userVerificationResult != .verified)
            else {
                throw VerityError(
                    .invalidRequest,
                    "`amr` and `userVerificationResult: verified` come only with an answer by the user-verification "
                        + "key.")
            }
            let expected = ChallengeSigningPayload(
                challengeId: challenge.id, factorId: factor.id, contentHash: challenge.contentHash,
                status: request.status, keyType: request.keyType, amr: request.amr, reason: request.reason,
                userVerificationResult: request.userVerificationResult)
            let key = try factor.signingKey(keyType)
            do {
                try ChallengeSigningPayload.verify(request.signature, expected: expected, key: key)
            } catch .mismatchedFields(let fields) {
                throw VerityError(
                    .invalidSignature,
                    "The signed \(fields.joined(separator: ", ")) do not match this challenge and answer.")
            } catch {
                throw VerityError(
                    .invalidSignature,
                    "The answer is not a valid signature by this factor's \(keyType.rawValue) key (\(error)).")
            }
            return Statements(
                status: request.status, keyType: keyType,
                statement: ChallengeRecord.AnswerStatement(
                    keyType: request.keyType, amr: request.amr, reason: request.reason,
                    userVerificationResult: request.userVerificationResult),
                reason: request.reason)
        case .shownClaims(let token, let shown, let dialect):
            guard token.count <= dialect.longestAnswer else {
                throw VerityError(.invalidSignature, "The answer is longer than \(dialect.longestAnswer) characters.")
            }
            let claims = try FactorService.verifiedPayload(token, as: [String: JSONValue].self, factor: factor)
            // Every field the dialect signs, as the device was shown it: a field left out is no match.
            guard !dialect.answerFields.isEmpty,
                dialect.answerFields.allSatisfy({ field in shown[field].map { claims[field] == $0 } ?? false })
            else {
                throw VerityError(.invalidSignature, "The signed claims do not match the challenge as it was shown.")
            }
            let status: ChallengeAnswer
            switch claims["status"] {
            case .string(ChallengeAnswer.approved.rawValue): status = .approved
            case .string(ChallengeAnswer.denied.rawValue): status = .denied
            default: throw VerityError(.invalidSignature, "The signed `status` must be `approved` or `denied`.")
            }
            return Statements(status: status, keyType: .proofOfPossession, statement: .init(), reason: nil)
        }
    }

    /// Throws unless `factor` can approve a challenge that asks for `userVerification`.
    private static func requireUsable(_ factor: FactorRecord, for userVerification: UserVerification) throws {
        if factor.suspendedAt != nil {
            throw VerityError(.factorSuspended, "Factor \(factor.id) is suspended after a report of unusual activity.")
        }
        if factor.type == .push, userVerification == .required, factor.userVerificationKey == nil {
            throw VerityError(
                .userVerificationRequired,
                "Factor \(factor.id) has no user-verification key, so it cannot approve a `required` challenge.")
        }
    }

    /// Records an answer whose signature ``checked(_:to:id:by:)`` has checked. The first answer wins.
    ///
    /// - Parameter use: The device token's use, spent with the answer, and spent all the same when the answer is
    ///   refused (already answered, expired); a token spent before refuses the answer as `token_replayed`.
    /// - Parameter events: Queues the caller's own events about the answer, in the same transaction.
    private func record(
        _ status: ChallengeStatus, of challenge: ChallengeRecord, by factor: FactorRecord,
        statement: ChallengeRecord.AnswerStatement = .init(), spending use: FactorService.DeviceTokenUse? = nil,
        events: ChallengeStore.AnswerEvents? = nil
    ) async throws -> ChallengeRecord {
        let now = clock.now()
        let outcome: ChallengeStore.AnswerOutcome
        do {
            outcome = try await store.answer(
                id: challenge.id, status: status, factorId: factor.id, now: now, statement: statement,
                spending: use, webhook: webhook(for:url:), events: events)
        } catch {
            throw try await factors.refusal(error, spending: use)
        }
        switch outcome {
        case .answered(let answered):
            changes.notify(answered.id)
            metrics.challenge(status, type: .push)
            outboxSignal.notify()
            logger.info(
                "Challenge answered", metadata: ["challenge": "\(answered.id)", "status": "\(status.rawValue)"])
            return answered
        case .tokenSpent:
            throw FactorService.replayed
        case .refused(let current):
            if (current ?? challenge).status(at: now) == .expired {
                throw Self.expired
            }
            throw VerityError(.challengeAlreadyAnswered, "The challenge was already answered.")
        }
    }

    /// The challenge, if this factor may see and answer it.
    func challengeFor(id: String, factor: FactorRecord) async throws -> ChallengeRecord {
        try Self.mine(try await store.challenge(id: id, projectId: factor.projectId), id: id, factor: factor)
    }

    /// `challenge` (the factor's project's challenge `id`, as read), if this factor may see and answer it.
    private static func mine(_ challenge: ChallengeRecord?, id: String, factor: FactorRecord) throws
        -> ChallengeRecord
    {
        guard let challenge else { throw VerityError(.challengeNotFound, "No challenge \(id).") }
        let mine =
            challenge.type == .push && challenge.userId == factor.userId
            && (challenge.factorId == nil || challenge.factorId == factor.id)
        guard mine else { throw VerityError(.wrongFactor, "This challenge is not for this factor.") }
        return challenge
    }

    // MARK: - Expiry

    /// Marks due challenges expired and queues their webhooks; returns how many.
    func expireDue() async throws -> Int {
        let expired = try await store.expireDue(now: clock.now(), webhook: webhook(for:url:))
        for challenge in expired {
            changes.notify(challenge.id)
            metrics.challenge(.expired, type: challenge.type)
        }
        if !expired.isEmpty { outboxSignal.notify() }
        return expired.count
    }

    /// Queues rendered messages about the project's challenges, as a challenge's own writes queue its webhook events.
    /// For tests only: a seam for the outbox's lanes, which need many events at once.
    func queue(_ messages: [QueuedMessage], projectId: String) async throws {
        try await store.queue(messages, projectId: projectId, now: clock.now())
    }

    /// Pushes a pending push challenge to its factor's device again (the Twilio face's `Notifications`). The push
    /// may wait `lifetime` seconds for delivery (the dialect's default when nil), never past the challenge's expiry;
    /// 0 gives it one second, the shortest a push provider is told to keep one.
    ///
    /// - Returns: The lifetime the push was given.
    @discardableResult
    func pushAgain(
        _ challenge: ChallengeRecord, to factor: FactorRecord, in project: Project,
        style: PushNotification.Style? = nil, lifetime: Int? = nil, dialect: FactorDialect = .verity
    ) async throws -> Int {
        let lifetime = try dialect.value(
            lifetime ?? dialect.defaultPushAgainLifetime, of: .lifetime, within: dialect.pushAgainLifetimes,
            unit: "seconds")
        let now = clock.now()
        switch challenge.status(at: now) {
        case .pending where factor.type == .push: break
        case .pending: throw VerityError(.invalidRequest, "Only a push challenge is pushed again.")
        case .expired: throw Self.expired
        case .approved, .denied:
            throw VerityError(.challengeAlreadyAnswered, "Only a pending challenge can be pushed again.")
        }
        let deadline = min(challenge.expiresAt, now + TimeInterval(max(lifetime, 1)))
        try await store.queue(
            [try push(of: challenge, to: factor, in: project, style: style, until: deadline)], projectId: project.id,
            now: now)
        outboxSignal.notify()
        return lifetime
    }

    // MARK: - Helpers

    /// The push of `challenge`, worth delivering until `deadline` (the challenge's expiry unless given).
    private func push(
        of challenge: ChallengeRecord, to factor: FactorRecord, in project: Project, style: PushNotification.Style?,
        until deadline: Date? = nil
    ) throws -> QueuedMessage {
        QueuedMessage(
            id: identifiers.make("msg"), channel: .push, destination: factor.id,
            payload: try Self.json(
                PushNotification(
                    id: "", platform: factor.pushPlatform ?? .none, token: "", appId: nil, title: project.name,
                    body: challenge.message, challengeId: challenge.id, factorId: factor.id,
                    expiresAt: Int((deadline ?? challenge.expiresAt).timeIntervalSince1970), style: style)))
    }

    /// The event message for the project's webhook endpoint at `url`.
    @Sendable private func webhook(for challenge: ChallengeRecord, url: String) throws -> QueuedMessage {
        let event = ChallengeEvent(
            id: identifiers.make("evt"), type: "challenge.\(challenge.status.rawValue)", createdAt: clock.now(),
            data: challenge.response(at: clock.now()))
        return QueuedMessage(
            id: identifiers.make("msg"), channel: .webhook, destination: url, payload: try Self.json(event))
    }

    private static let expired = VerityError(.challengeExpired, "The challenge expired before it was answered.")

    private static func requireVerified(_ factor: FactorRecord) throws {
        guard factor.status == .verified else {
            throw VerityError(.factorNotVerified, "Verify the factor before using it.")
        }
        guard factor.suspendedAt == nil else {
            throw VerityError(.factorSuspended, "The factor is suspended after a report of unusual activity.")
        }
    }

    private static func validate(message: String, details: [ChallengeDetail], hidden: [String: String]) throws {
        guard (1...256).contains(message.unicodeScalars.count) else {
            throw VerityError(.invalidRequest, "`message` must be 1 to 256 characters.")
        }
        guard details.count <= 20,
            details.allSatisfy({
                (1...64).contains($0.label.unicodeScalars.count) && (0...256).contains($0.value.unicodeScalars.count)
            })
        else {
            throw VerityError(
                .invalidRequest, "At most 20 `details`, each with a 1–64 character label and a value up to 256.")
        }
        guard hidden.count <= 20,
            hidden.allSatisfy({ $0.key.unicodeScalars.count <= 64 && $0.value.unicodeScalars.count <= 1024 })
        else {
            throw VerityError(
                .invalidRequest, "At most 20 `hiddenDetails`, keys up to 64 and values up to 1024 characters.")
        }
        if let key = hidden.keys.first(where: { $0.lowercased().hasPrefix(reservedDetailPrefix) }) {
            throw VerityError(
                .invalidRequest,
                "`hiddenDetails` key `\(key)` is reserved: keys starting `\(reservedDetailPrefix)` are Verity's.")
        }
    }

    /// The context, checked: each text at most 256 characters, at most 10 text items.
    private static func validated(_ context: ChallengeContext) throws -> ChallengeContext {
        let texts = [context.location, context.client, context.app].compactMap { $0 } + (context.textItems ?? [])
        guard (context.textItems?.count ?? 0) <= 10, texts.allSatisfy({ $0.unicodeScalars.count <= 256 }) else {
            throw VerityError(
                .invalidRequest, "`context` takes texts of at most 256 characters and at most 10 `textItems`.")
        }
        return context
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
