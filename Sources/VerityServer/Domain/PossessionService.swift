import Foundation
import Logging
import VerityCore

/// The rules of possession checks: a backend starts a short flow for a phone number, the app proves the phone with a
/// code (mobile) or an instant link (desktop), and the backend validates the outcome once.
///
/// Codes and links are verifications whose purpose names the flow, so they follow the verification rules (derived,
/// never stored; sent through the outbox) and no two flows share one. Each step is a conditional update of the flow.
public struct PossessionService: Sendable, UsesRuntime {
    /// Resends of the code or link per flow.
    public static let maxResends = 3
    /// Extra code entries after a wrong one.
    public static let maxRetries = 3
    /// Phone number changes per flow.
    public static let maxNumberChanges = 3
    static let tokenPrefix = "vpt_"

    private let store: PossessionStore
    let verifications: VerificationService
    let testNumbers: TestNumberService
    let appVerifications: AppVerificationService
    let renderer: MessageRenderer
    let silent: (any SilentPossessionProvider)?
    /// The client of the projects' carrier checks (CAMARA Number Verification).
    let carrier: CamaraNumberVerification
    let projects: AdminService
    let runtime: Runtime

    init(
        store: PossessionStore, verifications: VerificationService, testNumbers: TestNumberService,
        appVerifications: AppVerificationService, renderer: MessageRenderer, silent: (any SilentPossessionProvider)?,
        carrier: CamaraNumberVerification, projects: AdminService, runtime: Runtime
    ) {
        self.store = store
        self.verifications = verifications
        self.testNumbers = testNumbers
        self.appVerifications = appVerifications
        self.renderer = renderer
        self.silent = silent
        self.carrier = carrier
        self.projects = projects
        self.runtime = runtime
    }

    // MARK: - Backend

    /// Starts a flow; `owner` names the face resource that starts it (a Twilio service), which alone reads it back.
    func start(_ request: StartPossessionRequest, owner: String? = nil, in project: Project) async throws
        -> StartedPossession
    {
        let phone = try request.phoneNumber.map(Destination.phoneNumber)
        if let phone { try DestinationPolicy.requireAllowedDestination(.phone(phone), in: project) }
        if let url = request.finalTargetUrl {
            guard url.utf8.count <= 2048, let components = URLComponents(string: url),
                ["https", "http"].contains(components.scheme?.lowercased() ?? ""), components.host?.isEmpty == false
            else {
                throw VerityError(
                    .invalidRequest, "`finalTargetUrl` must be an http or https URL of at most 2048 bytes.")
            }
        }
        let now = clock.now()
        let id = identifiers.make("pos")
        // The token names its flow, so an app needs nothing else: `vpt_<correlationId>.<256 random bits>`.
        let token = "\(Self.tokenPrefix)\(id).\(Base64URL.encode(random.bytes(count: 32)))"
        // A mobile flow for a number the backend named may be proven by the carrier; the state that brings the app
        // back from the operator is as secret as the token and works once.
        let carrierCheck = project.settings.carrierCheck
        let carrierState =
            carrierCheck.enabled && request.flow == .mobile && phone != nil
            ? Base64URL.encode(random.bytes(count: 32)) : nil
        var record = PossessionRecord(
            id: id, projectId: project.id, flow: request.flow, phone: phone?.e164,
            finalTargetURL: request.finalTargetUrl, locale: try VerificationService.language(for: request.locale),
            status: .created, resends: 0, retries: 0, numberChanges: 0, method: nil, createdAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(project.settings.possessionLifetime)),
            allowsTestNumbers: request.allowTestNumbers ?? false)
        record.carrierCheck = carrierState == nil ? nil : .pending
        record.owner = owner
        try await store.insert(
            record, tokenHash: SecretHash.hex(token), carrierStateHash: carrierState.map(SecretHash.hex))
        metrics.possession(.started)
        logger.info(
            "Possession check started",
            metadata: ["possession": "\(record.id)", "flow": "\(record.flow.rawValue)", "project": "\(project.id)"])
        return StartedPossession(
            correlationId: record.id, authToken: token, flow: record.flow, expiresAt: record.expiresAt,
            carrierAuthorizationUrl: carrierState.map { carrier.authorizationURL(carrierCheck, state: $0) })
    }

    /// Starts a mobile flow for `phoneNumber` that the carrier check proves, for the face resource `owner` (Twilio's
    /// `Channel=sna`): the answer's `carrierAuthorizationUrl` is what the device opens over mobile data. Refused with
    /// `channel_disabled` while the project's carrier check is off.
    func startCarrierCheck(phoneNumber: String, owner: String, in project: Project) async throws -> StartedPossession {
        guard project.settings.carrierCheck.enabled else {
            throw VerityError(.channelDisabled, "This project's carrier check is off.")
        }
        return try await start(
            StartPossessionRequest(phoneNumber: phoneNumber, flow: .mobile), owner: owner, in: project)
    }

    /// The flow `owner` started, by `id`, or the newest one for `phoneNumber` when `id` is nil. Nil when there is no
    /// such flow at all; `possession_not_found` when it belongs to another owner, or to none.
    func ownedFlow(id: String?, phoneNumber: String?, owner: String, in project: Project) async throws
        -> PossessionRecord?
    {
        let flow: PossessionRecord?
        if let id {
            flow = try await store.flow(id: id, projectId: project.id)
        } else if let phoneNumber {
            let phone = try Destination.phoneNumber(phoneNumber)
            flow = try await store.newestFlow(projectId: project.id, owner: owner, phone: phone.e164)
        } else {
            flow = nil
        }
        guard let flow else { return nil }
        guard flow.owner == owner else { throw Self.notFound }
        return flow
    }

    /// A page of a project's possession flows for its operators, newest first, after the flow `cursor` names.
    func recent(cursor: String?, in project: Project) async throws -> (items: [PossessionRecord], nextCursor: String?) {
        try Paging.requireCursor(cursor, prefix: "pos_")
        let limit = try Paging.limit(nil, max: UserService.maxPageSize)
        let found = try await store.page(projectId: project.id, after: cursor, limit: limit + 1)
        let items = Array(found.prefix(limit))
        return (items, found.count > limit ? items.last?.id : nil)
    }

    /// The outcome, once and within the flow's lifetime (like Prove's validate): a second call answers
    /// `success: false`, `reason: already_validated`; a first call after the flow expired, `reason: expired`.
    func validate(id: String, in project: Project) async throws -> PossessionValidation {
        guard let flow = try await store.flow(id: id, projectId: project.id) else { throw Self.notFound }
        let now = clock.now()
        var success = false
        var reason: String?
        switch flow.status(at: now) {
        case .succeeded:
            success = try await store.markValidated(id: flow.id, now: now) != nil
            if success { metrics.possession(.validated) }
            if !success { reason = flow.validatedAt == nil && flow.expiresAt <= now ? "expired" : "already_validated" }
        case .failed: reason = "failed"
        case .expired: reason = "expired"
        case .created, .otpSent, .otpWrong, .linkSent: reason = "pending"
        }
        return PossessionValidation(
            success: success, reason: reason, phoneNumber: flow.phone, flow: flow.flow, method: flow.method,
            completedAt: flow.completedAt, testNumber: flow.testNumber)
    }

    // MARK: - App

    /// The flow an auth token runs; the token must be the one of `correlationId`.
    func authenticate(token: String, correlationId: String) async throws -> PossessionRecord {
        guard token.hasPrefix(Self.tokenPrefix), token.utf8.count <= 160,
            let flow = try await store.flow(tokenHash: SecretHash.hex(token)), flow.id == correlationId
        else {
            throw VerityError(.unauthorized, "Send the flow's auth token as `Authorization: Bearer vpt_…`.")
        }
        return flow
    }

    /// The flow as the app sees it; with `wait`, once it leaves `link_sent` or after `wait` seconds. A link opened
    /// on this node wakes the wait at once; one opened on another node is seen within ``ChangeSignal/crossNodePoll``.
    /// Past the node's cap of long polls the answer comes at once.
    func state(_ flow: PossessionRecord, wait: Int?, in project: Project) async throws -> PossessionState {
        if let wait, wait > 60 {
            throw VerityError(.invalidRequest, "`wait` must be between 0 and 60 seconds.")
        }
        return try await longPolls.admit(wait: wait) { admitted in
            guard let admitted, admitted > 0 else { return try await view(flow, in: project) }
            let latest = try await changes.poll(
                flow.id, from: flow, for: admitted, until: { $0.status(at: clock.now()) != .linkSent },
                look: { try await store.flow(id: $0.id, projectId: $0.projectId) ?? $0 })
            return try await view(latest, in: project)
        }
    }

    /// Sends the first code, by `channel` (SMS by default, or a call or WhatsApp).
    func startOTP(
        _ flow: PossessionRecord, phoneNumber: String?, channel: Channel? = nil, appProof: String? = nil,
        in project: Project
    ) async throws -> PossessionState {
        guard flow.flow == .mobile else {
            throw Self.outOfOrder("A desktop flow sends an instant link: call link/start.")
        }
        let phone = try phoneToProve(flow, given: phoneNumber, in: project)
        let started = try await sendingStep(
            flow, to: phone, by: try Self.channel(channel, for: flow), from: [.created], .start(phone: phone.e164),
            appProof: appProof, in: project)
        return try await view(started, in: project)
    }

    func finishOTP(_ flow: PossessionRecord, code: String, in project: Project) async throws -> PossessionState {
        try VerificationService.requireCodeFormat(code)
        let now = clock.now()
        guard flow.status(at: now) == .otpSent, let phone = flow.phone else { throw try await whyNot(flow, now: now) }
        guard
            let verification = try await verifications.pending(
                to: .phone(try Destination.phoneNumber(phone)), purpose: .possessionCode(flow.id), in: project)
        else {
            throw VerityError(.verificationNotFound, "The code expired or was replaced; resend it (otp/resend).")
        }
        let fixed = try await fixedCode(of: flow, phone: phone, in: project)
        let attempt: VerificationService.Attempt
        do {
            attempt = try await verifications.attempt(code, on: verification, fixedCode: fixed, now: now)
        } catch let error as VerityError where error.code == .maxCheckAttemptsReached {
            // The code took all the wrong entries a code allows (resends send the same code): the check fails.
            throw try await failure(
                of: flow, proving: phone, now: now, try await store.fail(id: flow.id, proving: phone, now: now))
        }
        // Every outcome is conditional on the number this code was sent to: after a number change the code of the
        // old number proves nothing, even when it was checked just before the change.
        switch attempt {
        case .approved:
            guard
                let done = try await store.succeed(
                    id: flow.id, from: [.otpSent], method: .otp, proving: phone, now: now)
            else { throw try await whyNot(flow, now: now, proving: phone) }
            proven(done)
            return try await view(done, in: project)
        case .wrong(let counted):
            // The update decides from the stored retries (a concurrent otp/retry may have used one since this
            // request read the flow); a dead code fails the check whatever retries are left.
            guard counted.status != .maxAttemptsReached else {
                throw try await failure(
                    of: flow, proving: phone, now: now, try await store.fail(id: flow.id, proving: phone, now: now))
            }
            throw try await failure(
                of: flow, proving: phone, now: now,
                try await store.recordWrongCode(id: flow.id, proving: phone, maxRetries: Self.maxRetries, now: now))
        }
    }

    /// The error that says what a wrong (or dead) code made of the flow: `marked` is the flow after the store
    /// recorded it, nil when the flow had moved on.
    private func failure(of flow: PossessionRecord, proving phone: String, now: Date, _ marked: PossessionRecord?)
        async throws -> VerityError
    {
        guard let marked else { return try await whyNot(flow, now: now, proving: phone) }
        guard marked.status == .otpWrong else {
            metrics.possession(.failed)
            return VerityError(
                .retryLimitReached, "The code is wrong and no retries are left; the check failed.",
                remainingAttempts: 0)
        }
        let retriesLeft = Self.maxRetries - marked.retries
        return VerityError(
            .wrongCode, "The code is wrong; call otp/retry to enter it again (\(retriesLeft) left).",
            remainingAttempts: retriesLeft)
    }

    /// Allows another code entry after a wrong one.
    func retryOTP(_ flow: PossessionRecord, in project: Project) async throws -> PossessionState {
        let now = clock.now()
        guard let retried = try await store.retry(id: flow.id, maxRetries: Self.maxRetries, now: now)
        else { throw try await whyNot(flow, now: now, limit: .retries) }
        return try await view(retried, in: project)
    }

    /// Sends the code (or, on desktop, the link) again; a code by `channel` when given: the same code, so a person
    /// who cannot read an SMS can ask for a call.
    func resend(_ flow: PossessionRecord, channel: Channel? = nil, appProof: String? = nil, in project: Project)
        async throws -> PossessionState
    {
        guard let known = flow.phone else { throw try await whyNot(flow, now: clock.now(), limit: .resends) }
        let resent = try await sendingStep(
            flow, to: try Destination.phoneNumber(known), by: try Self.channel(channel, for: flow),
            from: Self.waiting(flow),
            .resend(phone: known, limit: Self.maxResends), limit: .resends, appProof: appProof, in: project)
        return try await view(resent, in: project)
    }

    /// Proves another number instead: the old code dies and a new one goes to the new number.
    func changeNumber(
        _ flow: PossessionRecord, to phoneNumber: String?, channel: Channel? = nil, appProof: String? = nil,
        in project: Project
    ) async throws -> PossessionState {
        guard let phoneNumber else {
            throw VerityError(.phoneNumberRequired, "Give the new `phoneNumber`.")
        }
        let phone = try Destination.phoneNumber(phoneNumber)
        try DestinationPolicy.requireAllowedDestination(.phone(phone), in: project)
        let changed = try await sendingStep(
            flow, to: phone, by: try Self.channel(channel, for: flow), from: Self.waiting(flow),
            .changeNumber(to: phone.e164, limit: Self.maxNumberChanges),
            limit: .numberChanges, appProof: appProof, in: project)
        return try await view(changed, in: project)
    }

    /// Sends the instant link, by SMS (the only `channel` a link goes by).
    func startLink(
        _ flow: PossessionRecord, phoneNumber: String?, channel: Channel? = nil, appProof: String? = nil,
        in project: Project
    ) async throws -> PossessionState {
        guard flow.flow == .desktop else { throw Self.outOfOrder("A mobile flow uses a code: call otp/start.") }
        let phone = try phoneToProve(flow, given: phoneNumber, in: project)
        let started = try await sendingStep(
            flow, to: phone, by: try Self.channel(channel, for: flow), from: [.created], .start(phone: phone.e164),
            appProof: appProof, in: project)
        return try await view(started, in: project)
    }

    /// Asks the configured ``SilentPossessionProvider``; a confirmation proves possession without a code.
    func trySilent(_ flow: PossessionRecord, clientAddress: String?, in project: Project) async throws
        -> PossessionState
    {
        guard let silent else {
            throw Self.outOfOrder("No silent (carrier) check is configured on this server; use a code or a link.")
        }
        guard let phone = flow.phone else {
            throw VerityError(.phoneNumberRequired, "A silent check needs the number the backend started with.")
        }
        let now = clock.now()
        guard flow.status(at: now) == .created else { throw try await whyNot(flow, now: now) }
        guard try await silent.confirms(phoneNumber: phone, clientAddress: clientAddress),
            let done = try await store.succeed(id: flow.id, from: [.created], method: .silent, proving: nil, now: now)
        else { return try await view(flow, in: project) }
        proven(done)
        return try await view(done, in: project)
    }

    /// The end of the carrier check whose `state` the operator's redirect brought back: exchanges `code` and asks the
    /// operator about the flow's number. A confirmation proves possession (method `silent`); anything else (the
    /// operator's `error`, `false`, a timeout) leaves the flow to a code and says why in `carrierCheck`. A state
    /// works once; an unknown, used or finished one is `possession_not_found`.
    func carrierCallback(state: String?, code: String?, error: String?) async throws -> PossessionState {
        guard let state, (1...128).contains(state.utf8.count) else {
            throw VerityError(.invalidRequest, "The operator's redirect must carry the `state` Verity gave it.")
        }
        guard let claimed = try await store.claimCarrierCheck(stateHash: SecretHash.hex(state), now: clock.now()),
            let phone = claimed.phone, let project = try await projects.findProject(id: claimed.projectId)
        else {
            throw VerityError(.possessionNotFound, "No carrier check waits for this state: it was used, or is over.")
        }
        var outcome = CarrierCheckStatus.authorizationFailed
        if error == nil, let code, (1...2048).contains(code.utf8.count) {
            outcome = await carrier.check(
                project.settings.carrierCheck, code: code, state: state, phoneNumber: phone, correlator: claimed.id)
        }
        let finished = try await store.finishCarrierCheck(
            id: claimed.id, outcome: outcome, proving: phone, now: clock.now())
        logger.info(
            "Carrier check finished", metadata: ["possession": "\(claimed.id)", "outcome": "\(outcome.rawValue)"])
        changes.notify(claimed.id)
        if let finished, finished.status == .succeeded { proven(finished) }
        let latest = try await store.flow(id: claimed.id, projectId: claimed.projectId) ?? claimed
        return try await view(latest, in: project)
    }

    /// Counts and logs a flow that just succeeded, by the proof it used.
    private func proven(_ flow: PossessionRecord) {
        metrics.possession(.succeeded)
        if let method = flow.method { metrics.possessionProven(by: method, project: flow.projectId) }
        logger.info(
            "Possession proven", metadata: ["possession": "\(flow.id)", "method": "\(flow.method?.rawValue ?? "")"])
    }

    // MARK: - The hosted instant-link page

    /// What the page for `token` shows: the flow, if the link is good and still the one the flow waits for (not
    /// used, expired, or replaced by a number change).
    func linkTarget(_ token: String) async throws -> (flow: PossessionRecord, verification: VerificationRecord)? {
        let parts = token.split(separator: ".", maxSplits: 1).map(String.init)
        guard token.utf8.count <= 200, parts.count == 2, parts[0].hasPrefix("ver_"),
            let verification = try await verifications.verification(linkedBy: parts[0]),
            verification.purpose.isLink,
            CodeGenerator.constantTimeEquals(
                parts[1], renderer.codes.linkSecret(verificationId: verification.id, salt: verification.codeSalt)),
            case let flowId = String(verification.purpose.rawValue.dropFirst("possession_link:".count)),
            let flow = try await store.flow(id: flowId, projectId: verification.projectId)
        else { return nil }
        let now = clock.now()
        guard verification.status(at: now) == .pending, flow.status(at: now) == .linkSent,
            flow.phone == verification.destination
        else { return nil }
        return (flow, verification)
    }

    /// Confirms possession from the hosted page; nil when the link is bad, used or expired.
    func confirmLink(_ token: String) async throws -> PossessionRecord? {
        guard let (flow, verification) = try await linkTarget(token) else { return nil }
        let now = clock.now()
        guard try await verifications.approveLink(verification, now: now),
            let done = try await store.succeed(
                id: flow.id, from: [.linkSent], method: .instantLink, proving: verification.destination, now: now)
        else { return nil }
        changes.notify(flow.id)
        proven(done)
        return done
    }

    // MARK: - Helpers

    private func purpose(of flow: PossessionRecord) -> VerificationPurpose {
        flow.flow == .mobile ? .possessionCode(flow.id) : .possessionLink(flow.id)
    }

    /// The channel a step sends by: SMS unless a mobile flow's code is asked for by another phone channel. A desktop
    /// flow's instant link is a text message, so it goes by SMS only.
    private static func channel(_ requested: Channel?, for flow: PossessionRecord) throws -> Channel {
        switch (flow.flow, requested) {
        case (_, nil), (_, .sms?): return .sms
        case (.mobile, let channel?) where channel.reachesPhone: return channel
        case (.desktop, _):
            throw VerityError(.invalidRequest, "A desktop flow's instant link goes by SMS only.")
        default:
            throw VerityError(.invalidRequest, "A possession code goes by `sms`, `voice` or `whatsapp`.")
        }
    }

    /// The states a resend or a number change starts from.
    private static func waiting(_ flow: PossessionRecord) -> [PossessionStatus] {
        flow.flow == .mobile ? [.otpSent, .otpWrong] : [.linkSent]
    }

    /// A step that sends the code (mobile) or the link (desktop) to `phone`: the flow's update, the cancelling of
    /// what went to another number, the rate limits and the outbox message are one transaction, so a refused send
    /// (`rate_limited`) leaves the flow as it was, and no step counts without its message.
    ///
    /// A test number never gets a message: its code is fixed on mobile, and on desktop its link counts as opened at
    /// once (the flow succeeds with method `instant_link`), like Prove's sandbox; validate then says `testNumber`.
    /// Test numbers skip the send limits (nothing is sent); their codes have the same attempt limits as any other.
    private func sendingStep(
        _ flow: PossessionRecord, to phone: PhoneNumber, by channel: Channel = .sms, from: [PossessionStatus],
        _ step: PossessionStore.SendingStep, limit: Limit? = nil, appProof: String?, in project: Project
    ) async throws -> PossessionRecord {
        try DestinationPolicy.requireEnabled(channel, in: project)
        let now = clock.now()
        let fixed = try await fixedCode(of: flow, phone: phone.e164, in: project)
        // A test number is never sent to, so it needs no proof of the app (as Firebase's test numbers need none).
        let appVerified =
            fixed == nil ? try await appVerifications.requireProof(appProof, for: phone.e164, in: project) : nil
        let instant = flow.flow == .desktop && fixed != nil
        let sent: PossessionStore.Sent = flow.flow == .mobile ? .code : instant ? .linkOpenedAtOnce : .link
        let purpose = purpose(of: flow)
        let destination = Destination.phone(phone)
        // A desktop link lives as long as the flow: the person may be away from the phone for a while. A code lives
        // the project's possession code lifetime.
        let lifetime =
            flow.flow == .desktop
            ? flow.expiresAt.timeIntervalSince(now) : TimeInterval(project.settings.possessionCodeLifetime)
        let (verifications, store) = (self.verifications, self.store)
        let moved = try await store.unitOfWork { work -> PossessionRecord? in
            guard
                let moved = try await store.send(
                    step, id: flow.id, from: from, sent: sent, testNumber: fixed != nil, now: now, in: work)
            else { return nil }
            try await verifications.cancelPending(
                purpose: purpose, keeping: instant ? nil : destination, in: project, now: now, in: work)
            guard !instant else { return moved }
            if fixed == nil {
                try await verifications.admitSend(
                    to: destination, channel: channel, in: project, now: now, in: work)
            }
            _ = try await verifications.send(
                to: destination, channel: channel, language: flow.locale, purpose: purpose, in: project,
                deliver: fixed == nil, lifetime: lifetime, appProof: appVerified, now: now, in: work)
            return moved
        }
        guard let moved else { throw try await whyNot(flow, now: now, limit: limit) }
        if fixed == nil { verifications.outboxSignal.notify() }
        if moved.status == .succeeded { proven(moved) }
        return moved
    }

    /// The fixed code when `phone` is a test number that this flow may use: the number the backend started it for,
    /// or any, when the backend named none and allowed test numbers. Otherwise a test number is an ordinary number:
    /// an app holding a flow's token cannot switch to a test number's known code, nor to a desktop link that counts
    /// as opened at once.
    private func fixedCode(of flow: PossessionRecord, phone: String, in project: Project) async throws -> String? {
        let allowed = flow.backendPhone.map { $0 == phone } ?? flow.allowsTestNumbers
        guard allowed else { return nil }
        return try await testNumbers.fixedCode(phone: phone, in: project)
    }

    /// The number a start step proves: the backend's, or the app's when the backend gave none.
    private func phoneToProve(_ flow: PossessionRecord, given: String?, in project: Project) throws -> PhoneNumber {
        switch (flow.phone, given) {
        case (let known?, nil): return try Destination.phoneNumber(known)
        case (nil, let given?):
            let phone = try Destination.phoneNumber(given)
            try DestinationPolicy.requireAllowedDestination(.phone(phone), in: project)
            return phone
        case (let known?, let given?):
            guard let phone = try? Destination.phoneNumber(given), phone.e164 == known else {
                throw Self.outOfOrder("The backend named the number; change it with otp/change-number.")
            }
            return phone
        case (nil, nil):
            throw VerityError(.phoneNumberRequired, "The backend gave no number: send the user's `phoneNumber`.")
        }
    }

    private func view(_ flow: PossessionRecord, in project: Project) async throws -> PossessionState {
        let now = clock.now()
        var codeExpiresAt: Date?
        if let phone = flow.phone {
            codeExpiresAt = try await verifications.pending(
                to: .phone(try Destination.phoneNumber(phone)), purpose: purpose(of: flow), in: project)?.expiresAt
        }
        return PossessionState(
            correlationId: flow.id, flow: flow.flow, status: flow.status(at: now),
            maskedPhoneNumber: try flow.phone.map { try Destination.phoneNumber($0).masked },
            phoneNumberNeeded: flow.phone == nil,
            resendsLeft: Self.maxResends - flow.resends, retriesLeft: Self.maxRetries - flow.retries,
            numberChangesLeft: Self.maxNumberChanges - flow.numberChanges, codeExpiresAt: codeExpiresAt,
            expiresAt: flow.expiresAt, carrierCheck: flow.carrierCheck)
    }

    enum Limit {
        case resends, retries, numberChanges
    }

    /// A step matched nothing: re-read the flow and say why. `proving` is the number a checked code was sent to.
    private func whyNot(_ flow: PossessionRecord, now: Date, limit: Limit? = nil, proving: String? = nil)
        async throws -> VerityError
    {
        let current = try await store.flow(id: flow.id, projectId: flow.projectId) ?? flow
        switch current.status(at: now) {
        case .expired:
            return VerityError(.possessionExpired, "This possession check expired; the backend must start a new one.")
        case .succeeded, .failed:
            return Self.outOfOrder("This possession check is finished (\(current.status.rawValue)).")
        default: break
        }
        if let proving, current.phone != proving {
            return VerityError(
                .verificationNotFound, "The number was changed; enter the code sent to the new number.")
        }
        switch limit {
        case .resends? where current.resends >= Self.maxResends:
            return VerityError(.resendLimitReached, "At most \(Self.maxResends) resends per possession check.")
        case .retries? where current.retries >= Self.maxRetries:
            return VerityError(.retryLimitReached, "At most \(Self.maxRetries) retries per possession check.")
        case .numberChanges? where current.numberChanges >= Self.maxNumberChanges:
            return VerityError(
                .numberChangeLimitReached, "At most \(Self.maxNumberChanges) number changes per possession check.")
        default:
            return Self.outOfOrder("This step is not allowed while the check is \(current.status.rawValue).")
        }
    }

    private static func outOfOrder(_ detail: String) -> VerityError {
        VerityError(.stepOutOfOrder, detail)
    }

    private static let notFound = VerityError(.possessionNotFound, "No possession check with this id in this project.")

}

// MARK: - Test seams

extension PossessionService {
    /// The flow `id` as stored, read the way a step reads it when it starts. Tests only: the API reads a flow through
    /// its token.
    func storedFlow(id: String, in project: Project) async throws -> PossessionRecord? {
        try await store.flow(id: id, projectId: project.id)
    }

    /// Moves flow `id` by `step` in a unit of work of its own, without the verification work that the step's
    /// service method joins to it. Tests only: it stages the moment between a number change and the cancellation of
    /// the old code.
    func moveOnly(_ step: PossessionStore.SendingStep, id: String, from: [PossessionStatus], sent: PossessionStore.Sent)
        async throws
    {
        _ = try await store.unitOfWork { work in
            try await store.send(step, id: id, from: from, sent: sent, testNumber: false, now: clock.now(), in: work)
        }
    }
}
