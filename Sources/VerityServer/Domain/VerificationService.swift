import Foundation
import Logging
import VerityCore

/// The rules of one-time-code verifications.
struct VerificationService: Sendable, UsesRuntime {
    /// Sends to one destination while a verification is pending, the first included.
    static let maxSends = 5
    /// Wrong codes before a verification is dead.
    static let maxChecks = 5

    private let store: VerificationStore
    let limiter: RateLimiter
    let limits: RateLimits
    let codes: CodeGenerator
    let runtime: Runtime

    init(
        store: VerificationStore, limiter: RateLimiter, limits: RateLimits, codes: CodeGenerator, runtime: Runtime
    ) {
        self.store = store
        self.limiter = limiter
        self.limits = limits
        self.codes = codes
        self.runtime = runtime
    }

    func start(_ request: StartVerificationRequest, in project: Project) async throws -> VerificationResponse {
        let now = clock.now()
        return try await start(request, purpose: .api, in: project, now: now).response(at: now)
    }

    /// Starts (or re-sends) a verification of `purpose` under the project's limits.
    ///
    /// - Parameter codeLength: Digits in a new code; the project's code length when nil.
    func start(
        _ request: StartVerificationRequest, purpose: VerificationPurpose, codeLength: Int? = nil,
        in project: Project, now: Date
    ) async throws -> VerificationRecord {
        let destination = try Destination(request.to, channel: request.channel)
        try DestinationPolicy.requireAllowed(destination, channel: request.channel, in: project)
        let language = try Self.language(for: request.locale)
        try await admitSend(to: destination, channel: request.channel, in: project, now: now)
        let (record, _) = try await send(
            to: destination, channel: request.channel, language: language, purpose: purpose, in: project,
            codeLength: codeLength, now: now)
        return record
    }

    /// The send policy of every path that sends a code (API, sign-in, step-up, possession, the faces), whatever the
    /// channel: the channel must be on and the destination allowed (no premium-rate number, only the project's
    /// countries, also for a number stored on a user long ago), and a send takes from the project's bucket, the
    /// destination's (keyed on its canonical key, shared by SMS, calls and WhatsApp) and its block of 1,000 numbers';
    /// with `transaction`, inside it, so a rollback gives the tokens back.
    func admitSend(
        to destination: Destination, channel: Channel, in project: Project, now: Date, in work: UnitOfWork? = nil
    ) async throws {
        try DestinationPolicy.requireAllowed(destination, channel: channel, in: project)
        try await limiter.take("project:\(project.id)", limits.perProject, now: now, in: work)
        try await limiter.take(
            "destination:\(project.id):\(destination.key)", limits.perDestination, now: now, in: work)
        try await limiter.takeNumberBlock(
            destination, limits.perNumberBlock, in: project, now: now, in: work)
    }

    /// Sends a new code to `destination`, or the pending one again, for `purpose`; the caller has taken the rate
    /// limits that apply. A pending code is one per destination whatever the channel, so asking by another phone
    /// channel (a call after an SMS) sends the same code by that channel, and counts as a send.
    ///
    /// - Parameters:
    ///   - resend: Whether a pending code is sent again; when false it is returned as it is.
    ///   - deliver: Whether to send anything (false for test numbers).
    ///   - lifetime: How long the code works; the project's code lifetime when nil.
    ///   - codeLength: Digits in a new code; the project's code length when nil.
    ///   - sessionClaims: Claims for the session the code opens or steps up; they replace a pending code's.
    ///   - appProof: How the app proved itself when app verification admitted this send; a re-send keeps the pending
    ///     code's proof unless it brings one.
    ///   - work: A unit of work the caller runs and commits (it then notifies the outbox after the commit).
    /// - Returns: The pending verification and whether a message was queued.
    func send(
        to destination: Destination, channel: Channel, language: String, purpose: VerificationPurpose,
        in project: Project, resend: Bool = true, deliver: Bool = true, lifetime: TimeInterval? = nil,
        codeLength: Int? = nil, sessionClaims: [String: JSONValue]? = nil, startedBy: StartingFace? = nil,
        appProof: AppVerificationProof? = nil, now: Date, in work: UnitOfWork? = nil
    ) async throws -> (VerificationRecord, sent: Bool) {
        let candidate = VerificationRecord(
            id: identifiers.make("ver"), projectId: project.id, channel: channel,
            destination: destination.value, destinationKey: destination.key, locale: language, status: .pending,
            codeSalt: identifiers.secret(bytes: 16), codeLength: codeLength ?? project.settings.codeLength,
            sendAttempts: 1,
            checkAttempts: 0, createdAt: now, updatedAt: now,
            expiresAt: now.addingTimeInterval(lifetime ?? TimeInterval(project.settings.codeLifetime)),
            purpose: purpose,
            sessionClaims: sessionClaims, startedBy: startedBy, appProof: appProof)
        let outcome = try await store.startOrResend(
            new: candidate, maxSends: Self.maxSends, messageId: identifiers.make("msg"), resend: resend,
            deliver: deliver, now: now, in: work)
        switch outcome {
        case .created(let record, _), .resent(let record, _):
            if deliver { outboxSignal.notify() }
            metrics.verificationStarted(channel: record.channel)
            if let appProof { metrics.appVerified(by: appProof, project: project.id) }
            logger.info(
                "Verification started",
                metadata: [
                    "verification": "\(record.id)", "project": "\(project.id)", "to": "\(destination.masked)",
                    "purpose": "\(purpose.rawValue)", "sendAttempts": "\(record.sendAttempts)",
                ])
            return (record, deliver)
        case .pending(let record):
            return (record, false)
        case .sendLimitReached:
            throw VerityError(
                .maxSendAttemptsReached,
                "At most \(Self.maxSends) codes are sent while a verification is pending; wait until it expires.")
        }
    }

    /// What one code did to a verification.
    enum Attempt: Sendable {
        case approved(VerificationRecord)
        /// The code was wrong; the record has the attempt counted (and may now be `max_attempts_reached`).
        case wrong(VerificationRecord)
    }

    /// Tries `code` on a verification, counting a wrong one in the same statement that checks the limit.
    ///
    /// - Parameter fixedCode: The code a test number always has; nil compares with the verification's own code.
    /// - Throws: `max_check_attempts_reached` or `verification_not_found` when the verification cannot be checked.
    func attempt(_ code: String, on verification: VerificationRecord, fixedCode: String? = nil, now: Date)
        async throws -> Attempt
    {
        try await attempt(code, on: verification, fixedCode: fixedCode, now: now, proving: nil as Proof<Never>?).0
    }

    /// What an approved code proves, written in the approval's unit of work (a sign-in's user and session).
    /// It is given the approved verification as the approval wrote it.
    typealias Proof<Result: Sendable> = @Sendable (UnitOfWork, VerificationRecord) async throws -> Result

    /// ``attempt(_:on:fixedCode:now:)`` whose approval commits together with what `proof` writes, or not at all
    /// when `proof` throws (the code then stays pending). A wrong code is counted on its own, as always.
    func attempt<Result: Sendable>(
        _ code: String, on verification: VerificationRecord, fixedCode: String? = nil, now: Date,
        proving proof: Proof<Result>?
    ) async throws -> (Attempt, Result?) {
        try Self.requireCheckable(verification, at: now)
        let matches =
            if let fixedCode {
                CodeGenerator.constantTimeEquals(code, fixedCode)
            } else {
                codes.matches(
                    code, verificationId: verification.id, salt: verification.codeSalt,
                    length: verification.codeLength)
            }
        if matches {
            let approval: (VerificationRecord, Result?)?
            if let proof {
                approval = try await store.unitOfWork { work in
                    guard
                        let approved = try await store.approve(
                            id: verification.id, maxChecks: Self.maxChecks, now: now, in: work)
                    else { return nil }
                    return (approved, try await proof(work, approved))
                }
            } else {
                approval = try await store.approve(id: verification.id, maxChecks: Self.maxChecks, now: now)
                    .map { ($0, nil) }
            }
            guard let (approved, proven) = approval else { throw try await whyNotCheckable(verification, now: now) }
            metrics.verificationApproved(channel: approved.channel)
            logger.info("Verification approved", metadata: ["verification": "\(approved.id)"])
            return (.approved(approved), proven)
        }
        guard let counted = try await store.recordWrongCode(id: verification.id, maxChecks: Self.maxChecks, now: now)
        else { throw try await whyNotCheckable(verification, now: now) }
        if counted.status == .maxAttemptsReached {
            metrics.verificationFailed(channel: counted.channel)
        }
        logger.info(
            "Wrong code", metadata: ["verification": "\(counted.id)", "checkAttempts": "\(counted.checkAttempts)"])
        return (.wrong(counted), nil)
    }

    /// The message language for a requested locale.
    static func language(for locale: String?) throws -> String {
        guard let language = MessageTemplates.language(for: locale) else {
            throw VerityError(.invalidLocale, "The locale must be a language tag such as en, es-MX or pt-BR.")
        }
        return language
    }

    /// Rejects a code that is not 4 to 10 ASCII digits before anything is looked up.
    static func requireCodeFormat(_ code: String) throws {
        guard (4...10).contains(code.count), code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw VerityError(.invalidCode, "The code must be 4 to 10 digits.")
        }
    }

    func check(_ request: CheckVerificationRequest, in project: Project) async throws -> CheckVerificationResponse {
        let now = clock.now()
        switch try await check(request, purpose: .api, in: project, now: now) {
        case .approved(let approved):
            return CheckVerificationResponse(id: approved.id, status: .approved, valid: true)
        case .wrong(let counted):
            return CheckVerificationResponse(id: counted.id, status: counted.status(at: now), valid: false)
        }
    }

    /// Checks a code against the verification of `purpose` named by id or by destination.
    ///
    /// - Parameter limitByDestination: Whether a check by destination whose latest unexpired verification ran out of
    ///   checks reports `max_check_attempts_reached`, as a check by id does (Twilio's 60202), rather than finding no
    ///   pending verification.
    func check(
        _ request: CheckVerificationRequest, purpose: VerificationPurpose, in project: Project, now: Date,
        limitByDestination: Bool = false
    ) async throws -> Attempt {
        try Self.requireCodeFormat(request.code)
        var found: VerificationRecord?
        switch (request.id, request.to) {
        case (let id?, nil):
            found = try await store.verification(id: id, projectId: project.id)
        case (nil, let to?):
            let destination = try Destination(loginId: to)
            found = try await pending(to: destination, purpose: purpose, in: project)
            if found == nil, limitByDestination {
                found = try await store.latestUnexpiredVerification(
                    destinationKey: destination.key, purpose: purpose, projectId: project.id, now: now
                ).flatMap { $0.status == .maxAttemptsReached ? $0 : nil }
            }
        default:
            throw VerityError(.invalidRequest, "Name the verification with exactly one of `id` or `to`.")
        }
        guard let verification = found, verification.purpose == purpose else { throw Self.notFound }
        return try await attempt(request.code, on: verification, now: now)
    }

    func fetch(id: String, in project: Project) async throws -> VerificationResponse {
        try await verification(id: id, in: project).response(at: clock.now())
    }

    /// A verification of the project; when `purpose` is given, only one of that purpose.
    func verification(id: String, purpose: VerificationPurpose? = nil, in project: Project) async throws
        -> VerificationRecord
    {
        guard let verification = try await store.verification(id: id, projectId: project.id),
            purpose == nil || verification.purpose == purpose
        else {
            throw Self.notFound
        }
        return verification
    }

    /// The pending verification of `purpose` to `destination`: one per canonical key, so every case variant of an
    /// email address finds the same one. It may have just expired.
    func pending(to destination: Destination, purpose: VerificationPurpose, in project: Project) async throws
        -> VerificationRecord?
    {
        try await store.pendingVerification(destinationKey: destination.key, purpose: purpose, projectId: project.id)
    }

    /// The newest pending session-bound step-up code to `destination`, whichever session asked for it.
    func pendingSessionStepUp(to destination: Destination, in project: Project) async throws -> VerificationRecord? {
        try await store.pendingSessionBound(
            destinationKey: destination.key, purposePrefix: VerificationPurpose.stepUpSessionPrefix,
            projectId: project.id)
    }

    /// The newest pending login-update code to `destination` (a signed-in user's new address), whichever session
    /// asked for it.
    func pendingLoginUpdate(to destination: Destination, in project: Project) async throws -> VerificationRecord? {
        try await store.pendingSessionBound(
            destinationKey: destination.key, purposePrefix: VerificationPurpose.loginUpdatePrefix,
            projectId: project.id)
    }

    /// The codes of a project's pending sign-ins that `face` started, newest first, with where they went: what an
    /// auth emulator lists for tests (the Firebase face's development helper), never another face's sign-ins. Never
    /// for production: it reveals live codes.
    func pendingSignInCodes(startedBy face: StartingFace, in project: Project, limit: Int = 100) async throws -> [(
        destination: String, code: String, verificationId: String
    )] {
        try await store.pendingVerifications(
            purpose: .signIn, startedBy: face, projectId: project.id, now: clock.now(), limit: limit
        )
        .map {
            ($0.destination, codes.code(verificationId: $0.id, salt: $0.codeSalt, length: $0.codeLength), $0.id)
        }
    }

    /// A verification by id alone, for links that carry it (an instant link names its flow and project).
    func verification(linkedBy id: String) async throws -> VerificationRecord? {
        try await store.verification(id: id)
    }

    /// Approves a link's verification once: the same conditional update as a right code.
    func approveLink(_ verification: VerificationRecord, now: Date) async throws -> Bool {
        try await store.approve(id: verification.id, maxChecks: Self.maxChecks, now: now) != nil
    }

    /// Cancels the pending codes of `purpose` except the one to `keeping`, as part of `work`.
    func cancelPending(
        purpose: VerificationPurpose, keeping: Destination?, in project: Project, now: Date, in work: UnitOfWork
    ) async throws {
        try await store.cancelPending(
            purpose: purpose, projectId: project.id, keeping: keeping?.key, now: now, in: work)
    }

    /// When each of a verification's codes was sent (queued), oldest first, with the message ids and the channel
    /// each went by.
    func sends(of verification: VerificationRecord) async throws -> [(messageId: String, at: Date, channel: Channel?)] {
        try await store.sends(verificationId: verification.id)
    }

    // MARK: - Fallback

    /// The channel a code whose delivery by `failed` failed for good goes by once more: the project's fallback
    /// channel, when it is on and is another phone channel. Nil sends nothing more; a message by the fallback channel
    /// itself never falls back, so there is at most one fallback per failure, and an instant link (a text message to
    /// tap) has none.
    static func fallbackChannel(
        after failed: Channel, of purpose: VerificationPurpose, fallback: Channel?, disabled: [Channel]
    ) -> Channel? {
        guard let fallback, !purpose.isLink, failed.reachesPhone, fallback.reachesPhone, fallback != failed,
            !disabled.contains(fallback)
        else { return nil }
        return fallback
    }

    /// Gives up on the code message `failedMessageId` and queues the same code by `channel`, if its verification is
    /// still pending: the switch counts as a send, as a person's own switch does (but is never refused for it: the
    /// person asked for one code and has not had it). Returns whether a message was queued.
    func fallBack(
        failedMessageId: String, reason: String, verificationId: String, projectId: String, to channel: Channel
    ) async throws -> Bool {
        guard
            let record = try await store.fallBack(
                failedMessageId: failedMessageId, reason: reason, verificationId: verificationId,
                projectId: projectId, to: channel, messageId: identifiers.make("msg"), now: clock.now())
        else { return false }
        outboxSignal.notify()
        logger.info(
            "Code sent again by the fallback channel",
            metadata: [
                "verification": "\(record.id)", "failedMessage": "\(failedMessageId)", "channel": "\(channel.rawValue)",
                "sendAttempts": "\(record.sendAttempts)",
            ])
        return true
    }

    func cancel(id: String, in project: Project) async throws -> VerificationResponse {
        let now = clock.now()
        return try await cancel(id: id, in: project, now: now).response(at: now)
    }

    /// Cancels a pending verification; `purpose`, when given, must be the verification's.
    func cancel(id: String, purpose: VerificationPurpose? = nil, in project: Project, now: Date) async throws
        -> VerificationRecord
    {
        if let purpose { _ = try await verification(id: id, purpose: purpose, in: project) }
        guard let canceled = try await store.cancel(id: id, projectId: project.id, now: now) else {
            guard try await store.verification(id: id, projectId: project.id) != nil else { throw Self.notFound }
            throw VerityError(.conflict, "Only a pending verification can be canceled.")
        }
        return canceled
    }

    /// Approves a pending verification without a code: the caller checked the person some other way (Twilio's
    /// `Status=approved`). The same conditional update as a right code, so it approves at most once.
    func approveWithoutCode(id: String, purpose: VerificationPurpose, in project: Project, now: Date) async throws
        -> VerificationRecord
    {
        let verification = try await verification(id: id, purpose: purpose, in: project)
        try Self.requireCheckable(verification, at: now)
        guard let approved = try await store.approve(id: verification.id, maxChecks: Self.maxChecks, now: now)
        else { throw try await whyNotCheckable(verification, now: now) }
        metrics.verificationApproved(channel: approved.channel)
        logger.info("Verification approved without a code", metadata: ["verification": "\(approved.id)"])
        return approved
    }

    /// Whether `id` could be a verification's id (`ver_…`); anything else is not looked up.
    static func isVerificationId(_ id: String) -> Bool {
        id.hasPrefix("ver_") && id.count <= 64
    }

    // MARK: - Why a check cannot go on

    static let notFound = VerityError(
        .verificationNotFound, "No pending verification matches; it may be approved, canceled or expired.")

    private static func requireCheckable(_ verification: VerificationRecord, at now: Date) throws {
        switch verification.status(at: now) {
        case .pending: return
        case .maxAttemptsReached:
            throw VerityError(
                .maxCheckAttemptsReached, "Too many wrong codes: this verification can no longer be approved.")
        case .approved, .canceled, .expired: throw notFound
        }
    }

    /// A conditional update matched nothing: another request changed the verification. Re-read and say why.
    private func whyNotCheckable(_ verification: VerificationRecord, now: Date) async throws -> VerityError {
        guard let current = try await store.verification(id: verification.id, projectId: verification.projectId)
        else { return Self.notFound }
        do {
            try Self.requireCheckable(current, at: now)
        } catch let error as VerityError {
            return error
        }
        return Self.notFound
    }
}

extension VerificationService {
    /// The last `days` days of verifications of every project, for the console's dashboard.
    ///
    /// A past day whose verifications have all expired can no longer change, so it is counted once and recorded;
    /// only today (and yesterday, until its last code expires) is counted from the verifications each time.
    func activity(days: Int = Self.activityDays) async throws -> VerificationActivityReport {
        let now = clock.now()
        let today = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        let (counts, lastFinal) = try await recordFinishedDays(days: days, now: now)
        var all = counts
        all += Self.dayCounts(
            try await store.groups(
                from: Self.start(of: max(firstDay, lastFinal + 1)), to: Self.start(of: today + 1)))
        return Self.report(all, firstDay: firstDay, days: days)
    }

    /// How many days the console's dashboard shows.
    static let activityDays = 14

    /// Counts and records each finished day of the last `days` not recorded yet (housekeeping does it, so the
    /// dashboard's first view need not count a fortnight of verifications): the counts of the finished days, and the
    /// last finished day.
    @discardableResult
    func recordFinishedDays(days: Int = Self.activityDays, now: Date? = nil) async throws
        -> (counts: [VerificationDayCount], lastFinal: Int)
    {
        let now = now ?? clock.now()
        let today = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        func start(of day: Int) -> Date { Self.start(of: day) }
        let (recorded, stored) = try await store.dayCounts(from: firstDay, to: today - 1)
        var counts = stored
        // A code lives at most a day: the day before yesterday is final; yesterday once its last code expired.
        var lastFinal = today - 2
        if recorded.contains(today - 1) {
            lastFinal = today - 1
        } else if let latest = try await store.latestExpiry(from: start(of: today - 1), to: start(of: today)) {
            if latest <= now { lastFinal = today - 1 }
        } else {
            lastFinal = today - 1
        }
        let missing = firstDay <= lastFinal ? (firstDay...lastFinal).filter { !recorded.contains($0) } : []
        if let first = missing.first, let last = missing.last {
            let fresh = Self.dayCounts(try await store.groups(from: start(of: first), to: start(of: last + 1)))
                .filter { missing.contains($0.day) }
            try await store.recordDayCounts(fresh, days: missing)
            counts += fresh
        }
        return (counts, lastFinal)
    }

    private static func start(of day: Int) -> Date { Date(timeIntervalSince1970: Double(day) * 86_400) }

    private static func report(_ counts: [VerificationDayCount], firstDay: Int, days: Int)
        -> VerificationActivityReport
    {
        var byChannel: [Channel: [VerificationActivityReport.Counts]] = [:]
        var byRegion: [String: VerificationActivityReport.Counts] = [:]
        for count in counts where (0..<days).contains(count.day - firstDay) {
            byChannel[count.channel, default: Array(repeating: .init(), count: days)][count.day - firstDay].add(
                count.status, count.count)
            if !count.region.isEmpty { byRegion[count.region, default: .init()].add(count.status, count.count) }
        }
        return VerificationActivityReport(
            firstDay: firstDay, days: days, byChannel: byChannel,
            byCountry: byRegion.sorted { ($0.value.started, $1.key) > ($1.value.started, $0.key) }.map {
                ($0.key, $0.value)
            })
    }

    /// Groups counted by region: a phone number's region, read from one number of its group (the group shares the
    /// calling code and the digits that decide the region); none for email.
    static func dayCounts(_ groups: [VerificationGroup]) -> [VerificationDayCount] {
        var regions: [Substring: String] = [:]
        var merged: [String: VerificationDayCount] = [:]
        for group in groups {
            var region = ""
            if group.channel != .email {
                let prefix = group.sample.prefix(6)
                if let known = regions[prefix] {
                    region = known
                } else {
                    region = (try? PhoneNumber(parsing: group.sample))?.regionCode ?? "?"
                    regions[prefix] = region
                }
            }
            let key = "\(group.day) \(group.channel.rawValue) \(group.status.rawValue) \(region)"
            merged[
                key,
                default: .init(day: group.day, channel: group.channel, status: group.status, region: region, count: 0)
            ].count += group.count
        }
        return Array(merged.values)
    }

    /// A page of verifications of every project (or of `projectId`), newest first; `search` is a destination (a
    /// phone number or an email address) or a verification id.
    func recent(projectId: String?, search: String?, cursor: String?, limit: Int = 50) async throws
        -> (items: [VerificationRecord], nextCursor: String?)
    {
        try Paging.requireCursor(cursor, prefix: "ver_")
        if let search, search.hasPrefix("ver_") {
            let found = try await store.verification(id: search)
            return (found.map { [$0] } ?? [], nil)
        }
        let key = try search.map { try Destination(loginId: $0).key }
        let fetched = try await store.recent(
            projectId: projectId, destinationKey: key, after: cursor, limit: limit + 1)
        let items = Array(fetched.prefix(limit))
        return (items, fetched.count > limit ? items.last?.id : nil)
    }

    /// The days of `from...to` (days since 1970) whose counts are recorded.
    func recordedDays(from: Int, to: Int) async throws -> Set<Int> {
        try await store.dayCounts(from: from, to: to).days
    }
}
