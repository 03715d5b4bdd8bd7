import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle

/// What a test or an embedding program may replace. Everything defaults to the real thing.
public struct AppDependencies: Sendable {
    public var clock: any TimeSource = SystemTimeSource()
    public var random: any RandomSource = SystemRandomSource()
    public var logger: Logger?
    /// Replaces the senders the configuration names (tests record what would have been sent).
    public var senders: Senders?
    /// Replaces the database the configuration names (tests use `.sqliteMemory` or a fresh schema).
    public var database: DatabaseLocation?
    /// Replaces the master key file.
    public var masterKey: MasterKey?
    public var metrics: VerityMetrics?
    /// A carrier-based check apps may try before a possession code; none by default.
    public var silentPossession: (any SilentPossessionProvider)?

    public init() {}
}

/// One Verity node's parts, assembled once and shared by the HTTP server and the CLI.
public struct Verity: Sendable {
    public let database: Database
    public let metrics: VerityMetrics
    public let admin: AdminService
    let projects: ProjectStore
    let verifications: VerificationStore
    let outbox: OutboxStore
    let renderer: MessageRenderer
    let codes: CodeGenerator
    let sealer: SecretSealer
    /// Seals test numbers' fixed codes (webhook secrets have theirs in ``projects`` and ``outbox``).
    let testNumberCodes: SecretSealer
    let factorStore: FactorStore
    let challengeStore: ChallengeStore
    let changes = ChangeSignal()
    /// The node's long polls (challenge and possession `?wait=`), capped.
    let longPolls: LongPollGate
    let identifiers: Identifiers
    let random: any RandomSource
    let clock: any TimeSource
    let signal = OutboxSignal()
    let silentPossession: (any SilentPossessionProvider)?
    /// Where tenants' webhooks may point.
    let webhookAddresses: OutboundAddressPolicy
    let logger: Logger

    /// Opens the database (running migrations) and loads the master key.
    public static func open(_ configuration: ServerConfiguration, dependencies: AppDependencies = .init())
        async throws -> Verity
    {
        var logger = dependencies.logger ?? Logger(label: "verity")
        logger.logLevel = configuration.logLevel
        let masterKey = try dependencies.masterKey ?? configuration.loadMasterKey()
        let location = try dependencies.database ?? configuration.databaseLocation
        if case .sqliteFile(let path) = location {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        let database = try await Database.open(location, logger: logger)
        let codes = CodeGenerator(masterKey: masterKey)
        let identifiers = Identifiers(random: dependencies.random)
        let webhookSecrets = SecretSealer(masterKey: masterKey, purpose: "webhook-secrets")
        let testNumberCodes = SecretSealer(masterKey: masterKey, purpose: "test-number-codes")
        let projects = ProjectStore(database: database, webhookSecrets: webhookSecrets)
        // Secrets an older version stored in plain text are sealed before the node serves anything.
        try await projects.sealPlainWebhookSecrets()
        try await TestNumberStore(database: database, codes: testNumberCodes).sealPlainCodes()
        return Verity(
            database: database, metrics: dependencies.metrics ?? VerityMetrics(),
            admin: AdminService(
                projects: projects, identifiers: identifiers, webhookAddresses: configuration.webhookAddresses,
                clock: dependencies.clock),
            projects: projects, verifications: VerificationStore(database: database),
            outbox: OutboxStore(database: database, webhookSecrets: webhookSecrets),
            renderer: MessageRenderer(codes: codes, publicURL: configuration.resolvedPublicURL), codes: codes,
            sealer: SecretSealer(masterKey: masterKey), testNumberCodes: testNumberCodes,
            factorStore: FactorStore(database: database),
            challengeStore: ChallengeStore(database: database),
            longPolls: LongPollGate(capacity: configuration.maxLongPolls), identifiers: identifiers,
            random: dependencies.random,
            clock: dependencies.clock, silentPossession: dependencies.silentPossession,
            webhookAddresses: configuration.webhookAddresses, logger: logger)
    }

    func verificationService(limits: RateLimits) -> VerificationService {
        VerificationService(
            store: verifications, limiter: RateLimiter(store: RateLimitStore(database: database)), limits: limits,
            codes: codes, identifiers: identifiers, clock: clock, metrics: metrics, outboxSignal: signal,
            logger: logger)
    }

    /// Each project's session signing keys and their JWKS.
    public var signingKeys: SigningKeyService {
        SigningKeyService(
            store: SigningKeyStore(database: database), sealer: sealer, identifiers: identifiers, clock: clock,
            logger: logger)
    }

    /// A project's users: what the admin API and `verity admin user` manage.
    public var users: UserService {
        UserService(store: UserStore(database: database), identifiers: identifiers, clock: clock, logger: logger)
    }

    /// A project's roles and who holds them.
    public var roles: RoleService {
        RoleService(store: RoleStore(database: database), clock: clock, logger: logger)
    }

    func sessionService(publicURL: String) -> SessionService {
        SessionService(
            store: SessionStore(database: database), users: UserStore(database: database),
            roles: RoleStore(database: database), signingKeys: signingKeys, identifiers: identifiers, random: random,
            clock: clock, metrics: metrics, publicURL: publicURL, logger: logger)
    }

    var testNumberStore: TestNumberStore {
        TestNumberStore(database: database, codes: testNumberCodes)
    }

    /// A project's test phone numbers.
    public var testNumbers: TestNumberService {
        TestNumberService(store: testNumberStore, clock: clock, logger: logger)
    }

    /// Sign-in codes and step-up; `publicURL` is the issuer's base.
    func authService(limits: RateLimits = RateLimits(), publicURL: String) -> AuthService {
        AuthService(
            verifications: verificationService(limits: limits), sessions: sessionService(publicURL: publicURL),
            testNumbers: testNumberStore, users: UserStore(database: database),
            factors: factorService, challenges: challengeService,
            limiter: RateLimiter(store: RateLimitStore(database: database)), limits: limits, clock: clock,
            logger: logger)
    }

    func possessionService(limits: RateLimits) -> PossessionService {
        PossessionService(
            store: PossessionStore(database: database), verifications: verificationService(limits: limits),
            testNumbers: testNumberStore, renderer: renderer, silent: silentPossession,
            identifiers: identifiers, random: random, clock: clock, changes: changes, longPolls: longPolls,
            metrics: metrics, logger: logger)
    }

    var factorService: FactorService {
        FactorService(store: factorStore, identifiers: identifiers, sealer: sealer, clock: clock, logger: logger)
    }

    var challengeService: ChallengeService {
        ChallengeService(
            store: challengeStore, factors: factorService, identifiers: identifiers, clock: clock,
            outboxSignal: signal, changes: changes, longPolls: longPolls, metrics: metrics, logger: logger)
    }

    func challengeExpiryService(interval: Duration) -> ChallengeExpiryService {
        ChallengeExpiryService(
            challenges: challengeService, factors: factorStore, sessions: SessionStore(database: database),
            clock: clock,
            interval: interval, logger: logger)
    }

    func outboxWorker(senders: Senders, configuration: OutboxConfiguration) -> OutboxWorker {
        OutboxWorker(
            store: outbox, factors: factorStore, renderer: renderer, senders: senders, configuration: configuration,
            clock: clock,
            metrics: metrics, signal: signal, logger: logger)
    }

    /// Outbox messages, newest first, with the text as it was (or will be) delivered.
    public func outboxMessages(destination: String? = nil, limit: Int = 50) async throws -> [(
        message: OutboxMessage, rendered: OutgoingMessage?
    )] {
        // Codes are rendered from their verification; push and webhook messages carry their JSON in `payload`.
        var result: [(OutboxMessage, OutgoingMessage?)] = []
        for message in try await outbox.messages(destination: destination, limit: limit) {
            result.append((message, try await outbox.delivery(for: message).flatMap(renderer.render)))
        }
        return result
    }
}

extension Senders {
    /// The senders the configuration names.
    static func make(_ configuration: ServerConfiguration, logger: Logger) -> Senders {
        let console = ConsoleSender(logger: logger)
        let (sms, smsName): (any MessageSender, String) =
            switch configuration.sms {
            case .console: (console, "console")
            case .twilio(let twilio):
                (TwilioSMSSender(configuration: twilio, httpClient: .shared, logger: logger), "twilio")
            case .webhook(let webhook):
                (WebhookSMSSender(configuration: webhook, httpClient: .shared, logger: logger), "webhook")
            }
        let (email, emailName): (any MessageSender, String) =
            switch configuration.email {
            case .console: (console, "console")
            case .smtp(let smtp): (SMTPEmailSender(configuration: smtp, logger: logger), "smtp")
            }
        return Senders(
            sms: sms, smsName: smsName, email: email, emailName: emailName,
            push: PushRouter(
                apns: configuration.apns.map { APNsPushSender(configuration: $0, httpClient: .shared, logger: logger) },
                fcm: configuration.fcm.map { FCMPushSender(configuration: $0, httpClient: .shared, logger: logger) },
                console: ConsolePushSender(logger: logger)),
            pushName: "push",
            events: HTTPEventSender(addresses: configuration.webhookAddresses, logger: logger))
    }
}

/// Closes the database after everything started after it (the worker, the HTTP server) has stopped.
struct DatabaseService: Service, CustomStringConvertible {
    let database: Database

    /// Just the name, for ServiceLifecycle's debug log.
    var description: String { "DatabaseService" }

    func run() async throws {
        // Checkpoint the SQLite write-ahead log every second until shutdown (the commits themselves never do).
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await database.checkpoint()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) }
        }
        try? await database.checkpoint()
        try await database.close()
    }
}
