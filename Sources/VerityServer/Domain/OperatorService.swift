import Crypto
import Foundation
import Logging
import VerityCore

/// The console's operators: who they are, how they sign in (a one-time link, and a TOTP code when they have one),
/// how long a browser stays signed in, and the audit trail of what they did.
public struct OperatorService: Sendable, UsesRuntime {
    private let store: OperatorStore
    /// Seals operators' TOTP secrets at rest.
    let totpSecrets: SecretSealer
    let runtime: Runtime

    init(
        store: OperatorStore, totpSecrets: SecretSealer, runtime: Runtime
    ) {
        self.store = store
        self.totpSecrets = totpSecrets
        self.runtime = runtime
    }

    /// How long a sign-in link works.
    public static let linkLifetime: TimeInterval = 10 * 60
    /// A session unused for this long is signed out.
    public static let idleTimeout: TimeInterval = 30 * 60
    /// A session ends this long after it started, however busy.
    public static let maximumLifetime: TimeInterval = 12 * 60 * 60
    /// How many authenticator codes one sign-in link takes; then it is spent, whatever the last code was.
    public static let codesPerLink = 3
    /// How many wrong codes in a row an operator, or a client address, may send before it is locked out.
    public static let wrongCodesBeforeLockout = 5
    /// A run of wrong codes is forgotten after this long without another.
    public static let wrongCodeMemory: TimeInterval = 24 * 60 * 60

    /// How long the `failures`th wrong code in a row locks its operator and its client address out: nothing before
    /// ``wrongCodesBeforeLockout``, then one minute, doubling with every further one, up to an hour.
    public static func lockout(afterFailures failures: Int) -> TimeInterval? {
        guard failures >= wrongCodesBeforeLockout else { return nil }
        let doublings = min(failures - wrongCodesBeforeLockout, 6)
        return min(60 * Double(1 << doublings), 3600)
    }

    /// A new operator, and the `otpauth://` URI to add to an authenticator app when `withTOTP` is set (shown once).
    public func create(name: String, withTOTP: Bool) async throws -> (ConsoleOperator, totpURI: String?) {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...64).contains(trimmed.unicodeScalars.count),
            trimmed.allSatisfy({ $0.isLetter || $0.isNumber || "._-@".contains($0) })
        else {
            throw ConfigurationError("An operator name is 1 to 64 letters, digits, '.', '_', '-' or '@'.")
        }
        var totpURI: String?
        var sealed: String?
        let consoleOperator = ConsoleOperator(
            id: identifiers.make("opr"), name: trimmed, hasTOTP: withTOTP, createdAt: clock.now())
        if withTOTP {
            let secret = random.bytes(count: 20)
            totpURI = try TOTP(secret: secret).uri(issuer: "Verity console", account: trimmed)
            sealed = try totpSecrets.sealText(Base32.encode(secret), context: consoleOperator.id)
        }
        guard try await store.insert(consoleOperator, sealedTOTPSecret: sealed) else {
            throw ConfigurationError("There is an operator called \(trimmed) already.")
        }
        return (consoleOperator, totpURI)
    }

    public func list() async throws -> [ConsoleOperator] {
        try await store.operators()
    }

    /// A one-time sign-in secret for the operator `name`, working for ``linkLifetime``.
    public func signInLink(operatorName name: String) async throws -> (token: String, expiresAt: Date) {
        guard let (consoleOperator, _) = try await store.operatorNamed(name) else {
            throw ConfigurationError("There is no operator called \(name) (verity admin operator create \(name)).")
        }
        let token = "vcl_" + identifiers.secret(bytes: 32)
        let now = clock.now()
        let expiresAt = now.addingTimeInterval(Self.linkLifetime)
        try await store.insertLink(
            tokenHash: SecretHash.hex(token), operatorId: consoleOperator.id, now: now, expiresAt: expiresAt)
        return (token, expiresAt)
    }

    /// The operator a sign-in link is for, while it works; nil for a used, expired or unknown link.
    func linkOperator(_ token: String) async throws -> ConsoleOperator? {
        guard Self.isWellFormed(token, prefix: "vcl_") else { return nil }
        return try await store.linkOperator(
            tokenHash: SecretHash.hex(token), codeAttempts: Self.codesPerLink, now: clock.now())?.0
    }

    /// Why a sign-in was refused.
    enum SignInRefusal: Error, Equatable {
        /// The link is used, expired, unknown or spent on wrong codes.
        case invalidLink
        /// The operator has TOTP and the code is missing, wrong or used already; the link takes `codesLeft` more
        /// (nil: none was counted, the code was missing).
        case invalidCode(codesLeft: Int?)
        /// Too many wrong codes in a row, for this operator or from this client address: no code is checked for
        /// `retryAfter` seconds.
        case lockedOut(retryAfter: Int)
        /// The operator has a passkey and no TOTP: the link alone does not sign them in, their passkey must.
        case passkeyRequired
    }

    /// Uses the link (and checks the TOTP code when the operator has one) and opens a session; returns the secret
    /// for the session cookie. Every code tried counts against the link (``codesPerLink``), the operator and the
    /// client address (``lockout(afterFailures:)``) before it is checked, and every refused one is audited. An
    /// operator with a passkey and no TOTP is refused (``SignInRefusal/passkeyRequired``): they sign in with
    /// ``OperatorPasskeyService/signIn(linkToken:answer:clientAddress:)``.
    func signIn(linkToken: String, totpCode: String?, clientAddress: String? = nil) async throws
        -> (token: String, session: ConsoleSession)
    {
        guard Self.isWellFormed(linkToken, prefix: "vcl_") else { throw SignInRefusal.invalidLink }
        let linkHash = SecretHash.hex(linkToken)
        let now = clock.now()
        guard
            let (consoleOperator, sealed) = try await store.linkOperator(
                tokenHash: linkHash, codeAttempts: Self.codesPerLink, now: now)
        else { throw SignInRefusal.invalidLink }
        var counter: UInt64?
        var attempts = 0
        var subjects: [String] = []
        if sealed == nil, consoleOperator.hasPasskeys {
            try await audit(
                consoleOperator, "operator.sign_in.passkey_required", clientAddress: clientAddress,
                note: "the link alone does not sign in an operator with a passkey")
            throw SignInRefusal.passkeyRequired
        }
        if let sealed {
            subjects = ["operator:\(consoleOperator.id)"]
            if let clientAddress { subjects.append("client:\(AuthService.clientBucket(clientAddress))") }
            let checked = try await checkCode(
                totpCode, sealed: sealed, of: consoleOperator, linkHash: linkHash, subjects: subjects,
                clientAddress: clientAddress, now: now)
            counter = checked.counter
            attempts = checked.attempts
        }
        let opened: (token: String, session: ConsoleSession)?
        do {
            opened = try await openSession(
                linkHash: linkHash, for: consoleOperator, totpCounter: counter, clearing: subjects, now: now)
        } catch is OperatorStore.ReplayedStep {
            try await refuseCode(
                consoleOperator, "operator.sign_in.replayed_code", clientAddress: clientAddress,
                codesLeft: Self.codesPerLink - attempts)
        }
        guard let opened else { throw SignInRefusal.invalidLink }
        try await signedIn(opened.session, "operator.sign_in")
        return opened
    }

    /// Uses the sign-in link `linkHash` and opens a session for `consoleOperator` (with `totpCounter`, moving their
    /// last used TOTP step, and ending the runs of failed attempts of `clearing`), in `work` when given; the secret for
    /// the session cookie and the session, or nil when the link is used, expired or unknown.
    func openSession(
        linkHash: String, for consoleOperator: ConsoleOperator, totpCounter: UInt64? = nil, clearing: [String] = [],
        now: Date, in work: UnitOfWork? = nil
    ) async throws -> (token: String, session: ConsoleSession)? {
        let token = "vcs_" + identifiers.secret(bytes: 32)
        let sessionId = identifiers.make("csn")
        guard
            let operatorId = try await store.signIn(
                tokenHash: linkHash, sessionId: sessionId, sessionTokenHash: SecretHash.hex(token),
                totpCounter: totpCounter, clearing: clearing, now: now, in: work)
        else { return nil }
        let record = ConsoleSessionRecord(id: sessionId, operatorId: operatorId, operatorName: consoleOperator.name)
        return (token, ConsoleSession(record: record, csrfToken: Self.csrfToken(for: token)))
    }

    /// Audits and logs a sign-in that opened `session`, as `action`.
    func signedIn(_ session: ConsoleSession, _ action: String) async throws {
        try await audit(session.record, action, target: session.record.operatorId)
        logger.info(
            "Console sign-in",
            metadata: ["operator": "\(session.record.operatorId)", "session": "\(session.record.id)"])
    }

    /// The hash a sign-in link is stored by; nil for a token that is not one.
    static func linkHash(of token: String) -> String? {
        isWellFormed(token, prefix: "vcl_") ? SecretHash.hex(token) : nil
    }

    /// Counts the attempt and checks `code` against the operator's TOTP secret; the matching time step, or a
    /// refusal (audited).
    private func checkCode(
        _ code: String?, sealed: String, of consoleOperator: ConsoleOperator, linkHash: String, subjects: [String],
        clientAddress: String?, now: Date
    ) async throws -> (counter: UInt64, attempts: Int) {
        // An empty form is no guess: it is refused without spending anything.
        guard let code = code?.filter({ !$0.isWhitespace }), !code.isEmpty else {
            throw SignInRefusal.invalidCode(codesLeft: nil)
        }
        let attempt = try await store.takeCodeAttempt(
            tokenHash: linkHash, subjects: subjects, perLink: Self.codesPerLink,
            lockout: { Self.lockout(afterFailures: $0) }, forgetBefore: now.addingTimeInterval(-Self.wrongCodeMemory),
            now: now)
        switch attempt {
        case .spentLink:
            throw SignInRefusal.invalidLink
        case .locked(let until):
            let retryAfter = max(Int(until.timeIntervalSince(now).rounded(.up)), 1)
            try await audit(
                consoleOperator, "operator.sign_in.locked_out", clientAddress: clientAddress,
                note: "retry in \(retryAfter) s")
            logger.notice(
                "Console sign-in refused: locked out after wrong codes",
                metadata: ["operator": "\(consoleOperator.id)"])
            throw SignInRefusal.lockedOut(retryAfter: retryAfter)
        case .taken(let attempts):
            let secret = try totpSecrets.openText(sealed, context: consoleOperator.id)
            guard let bytes = Base32.decode(secret) else { throw StoreError.corruptValue(column: "totp_secret") }
            guard let matched = try TOTP(secret: bytes).matchingCounter(for: code, at: now) else {
                try await refuseCode(
                    consoleOperator, "operator.sign_in.wrong_code", clientAddress: clientAddress,
                    codesLeft: Self.codesPerLink - attempts)
            }
            return (matched, attempts)
        }
    }

    /// Audits and throws the refusal of a wrong (or replayed) code, with the codes the link takes still.
    private func refuseCode(
        _ consoleOperator: ConsoleOperator, _ action: String, clientAddress: String?, codesLeft: Int
    ) async throws -> Never {
        try await audit(
            consoleOperator, action, clientAddress: clientAddress,
            note: codesLeft == 0 ? "link spent" : "\(codesLeft) more codes on this link")
        logger.notice("Console sign-in refused: wrong TOTP code", metadata: ["operator": "\(consoleOperator.id)"])
        throw SignInRefusal.invalidCode(codesLeft: codesLeft)
    }

    /// Writes a refused sign-in as the operator's to the audit trail: the operator's id, the client's address when
    /// it is known, and `note`.
    func audit(_ consoleOperator: ConsoleOperator, _ action: String, clientAddress: String?, note: String)
        async throws
    {
        let from = clientAddress.map { " from \($0)" } ?? ""
        try await audit(
            ConsoleSessionRecord(id: "", operatorId: consoleOperator.id, operatorName: consoleOperator.name), action,
            target: "\(consoleOperator.id)\(from): \(note)")
    }

    /// The live session a cookie names (and it counts as activity); nil when it is signed out, idle too long or
    /// too old.
    func session(cookie token: String) async throws -> ConsoleSession? {
        guard Self.isWellFormed(token, prefix: "vcs_") else { return nil }
        let now = clock.now()
        guard
            let record = try await store.touchSession(
                tokenHash: SecretHash.hex(token), now: now, idleSince: now.addingTimeInterval(-Self.idleTimeout),
                startedSince: now.addingTimeInterval(-Self.maximumLifetime))
        else { return nil }
        return ConsoleSession(record: record, csrfToken: Self.csrfToken(for: token))
    }

    /// Whether a form's CSRF token is the session's, compared in constant time.
    func acceptsCSRF(_ token: String?, for session: ConsoleSession) -> Bool {
        guard let token else { return false }
        let expected = Array(session.csrfToken.utf8)
        let given = Array(token.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    func signOut(_ session: ConsoleSession) async throws {
        try await store.endSession(id: session.record.id, now: clock.now())
        try await audit(session.record, "operator.sign_out", target: session.record.operatorId)
    }

    /// Writes what an operator did to the audit trail.
    func audit(_ session: ConsoleSessionRecord, _ action: String, target: String) async throws {
        try await store.record(
            AuditEntry(
                id: identifiers.make("aud"), operatorId: session.operatorId, operatorName: session.operatorName,
                action: action, target: target, createdAt: clock.now()))
    }

    /// A page of the audit trail, newest first.
    func auditTrail(search: String?, cursor: String?, limit: Int = 50) async throws -> Page<AuditEntry> {
        try Paging.requireCursor(cursor, prefix: "aud_")
        let entries = try await store.audit(
            search: search.flatMap { $0.isEmpty ? nil : String($0.prefix(100)) }, after: cursor, limit: limit + 1)
        return Page(fetched: entries, limit: limit, cursor: { $0.id })
    }

    /// The CSRF token of the session whose cookie is `token`: an HMAC of it, so it needs no storage and changes
    /// with every sign-in.
    static func csrfToken(for token: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("console-csrf".utf8), using: SymmetricKey(data: Data(token.utf8)))
        return Hex.encode(mac)
    }

    /// Whether `token` has the shape of a secret from ``Identifiers/secret(bytes:)`` after `prefix`, so a malformed one
    /// is turned away before it is hashed or looked up.
    static func isWellFormed(_ token: String, prefix: String) -> Bool {
        token.hasPrefix(prefix) && token.count <= 100
            && token.utf8.allSatisfy {
                $0 == UInt8(ascii: "_") || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7a)
            }
    }
}
