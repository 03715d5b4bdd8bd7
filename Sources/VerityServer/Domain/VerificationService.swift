import Foundation
import Logging
import VerityCore

/// The rules of one-time-code verifications.
struct VerificationService: Sendable {
    /// Sends to one destination while a verification is pending, the first included.
    static let maxSends = 5
    /// Wrong codes before a verification is dead.
    static let maxChecks = 5

    let store: VerificationStore
    let limiter: RateLimiter
    let limits: RateLimits
    let codes: CodeGenerator
    let identifiers: Identifiers
    let clock: any TimeSource
    let metrics: VerityMetrics
    let outboxSignal: OutboxSignal
    let logger: Logger

    func start(_ request: StartVerificationRequest, in project: Project) async throws -> VerificationResponse {
        let destination = try Destination(request.to, channel: request.channel)
        if case .phone(let number) = destination, let allowed = project.settings.allowedCountries,
            !allowed.contains(number.regionCode)
        {
            throw VerityError(.countryNotAllowed, "This project does not send to \(number.regionCode) numbers.")
        }
        guard let language = MessageTemplates.language(for: request.locale) else {
            throw VerityError(.invalidLocale, "The locale must be a language tag such as en, es-MX or pt-BR.")
        }
        let now = clock.now()
        try await limiter.take("project:\(project.id)", limits.perProject, now: now)
        try await limiter.take("destination:\(project.id):\(destination.value)", limits.perDestination, now: now)

        let candidate = VerificationRecord(
            id: identifiers.make("ver"), projectId: project.id, channel: request.channel,
            destination: destination.value, locale: language, status: .pending,
            codeSalt: identifiers.secret(bytes: 16), codeLength: project.settings.codeLength, sendAttempts: 1,
            checkAttempts: 0, createdAt: now, updatedAt: now,
            expiresAt: now.addingTimeInterval(TimeInterval(project.settings.codeLifetime)))
        let outcome = try await store.startOrResend(
            new: candidate, maxSends: Self.maxSends, messageId: identifiers.make("msg"), now: now)
        switch outcome {
        case .created(let record, _), .resent(let record, _):
            outboxSignal.notify()
            metrics.verificationStarted(channel: record.channel)
            logger.info(
                "Verification started",
                metadata: [
                    "verification": "\(record.id)", "project": "\(project.id)", "to": "\(destination.masked)",
                    "sendAttempts": "\(record.sendAttempts)",
                ])
            return record.response(at: now)
        case .sendLimitReached:
            throw VerityError(
                .maxSendAttemptsReached,
                "At most \(Self.maxSends) codes are sent while a verification is pending; wait until it expires.")
        }
    }

    func check(_ request: CheckVerificationRequest, in project: Project) async throws -> CheckVerificationResponse {
        guard (4...10).contains(request.code.count), request.code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw VerityError(.invalidCode, "The code must be 4 to 10 digits.")
        }
        let now = clock.now()
        let found: VerificationRecord?
        switch (request.id, request.to) {
        case (let id?, nil):
            found = try await store.verification(id: id, projectId: project.id)
        case (nil, let to?):
            let destination = try Destination(to, channel: to.contains("@") ? .email : .sms)
            found = try await store.pendingVerification(destination: destination.value, projectId: project.id)
        default:
            throw VerityError(.invalidRequest, "Name the verification with exactly one of `id` or `to`.")
        }
        guard let verification = found else { throw Self.notFound }
        try Self.requireCheckable(verification, at: now)

        if codes.matches(
            request.code, verificationId: verification.id, salt: verification.codeSalt,
            length: verification.codeLength)
        {
            guard let approved = try await store.approve(id: verification.id, maxChecks: Self.maxChecks, now: now)
            else { throw try await whyNotCheckable(verification.id, project: project, now: now) }
            metrics.verificationApproved(channel: approved.channel)
            logger.info("Verification approved", metadata: ["verification": "\(approved.id)"])
            return CheckVerificationResponse(id: approved.id, status: .approved, valid: true)
        }
        guard let counted = try await store.recordWrongCode(id: verification.id, maxChecks: Self.maxChecks, now: now)
        else { throw try await whyNotCheckable(verification.id, project: project, now: now) }
        if counted.status == .maxAttemptsReached {
            metrics.verificationFailed(channel: counted.channel)
        }
        logger.info(
            "Wrong code", metadata: ["verification": "\(counted.id)", "checkAttempts": "\(counted.checkAttempts)"])
        return CheckVerificationResponse(id: counted.id, status: counted.status(at: now), valid: false)
    }

    func fetch(id: String, in project: Project) async throws -> VerificationResponse {
        guard let verification = try await store.verification(id: id, projectId: project.id) else {
            throw Self.notFound
        }
        return verification.response(at: clock.now())
    }

    func cancel(id: String, in project: Project) async throws -> VerificationResponse {
        let now = clock.now()
        guard let canceled = try await store.cancel(id: id, projectId: project.id, now: now) else {
            guard try await store.verification(id: id, projectId: project.id) != nil else { throw Self.notFound }
            throw VerityError(.conflict, "Only a pending verification can be canceled.")
        }
        return canceled.response(at: now)
    }

    // MARK: - Why a check cannot go on

    private static let notFound = VerityError(
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
    private func whyNotCheckable(_ id: String, project: Project, now: Date) async throws -> VerityError {
        guard let current = try await store.verification(id: id, projectId: project.id) else { return Self.notFound }
        do {
            try Self.requireCheckable(current, at: now)
        } catch let error as VerityError {
            return error
        }
        return Self.notFound
    }
}

/// A validated, normalised destination.
enum Destination: Sendable {
    case phone(PhoneNumber)
    case email(EmailAddress)

    init(_ input: String, channel: Channel) throws {
        switch channel {
        case .sms:
            do {
                self = .phone(try PhoneNumber(parsing: input))
            } catch {
                throw VerityError(.invalidPhoneNumber, "\(error)")
            }
        case .email:
            do {
                self = .email(try EmailAddress(parsing: input))
            } catch {
                throw VerityError(.invalidEmail, "\(error)")
            }
        }
    }

    /// The normalised form that is stored and sent to.
    var value: String {
        switch self {
        case .phone(let number): number.e164
        case .email(let address): address.address
        }
    }

    /// The form that may appear in logs.
    var masked: String {
        switch self {
        case .phone(let number): number.masked
        case .email(let address): address.masked
        }
    }
}
