import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle

/// One Verity node's parts: every service built once, over one database, and shared by the HTTP server and the
/// CLI. This is the composition root: services get what they use when they are built here, and the router hands
/// each controller the services it calls (see `buildRouter`); nothing looks a service up later.
public struct Verity: Sendable, UsesRuntime {
    public let database: Database
    public let metrics: VerityMetrics
    public let admin: AdminService
    /// Each project's session signing keys and their JWKS.
    public let signingKeys: SigningKeyService
    /// A project's users: what the admin API and `verity admin user` manage.
    public let users: UserService
    /// A project's roles and who holds them.
    public let roles: RoleService
    /// Users with their roles, status and sessions: the changes that touch several at once.
    public let accounts: UserAccounts
    /// A project's test phone numbers.
    public let testNumbers: TestNumberService
    /// Projects' names for the Firebase face.
    public let firebaseProjects: FirebaseProjects
    /// The console's operators, their sign-in links and sessions, and the audit trail.
    public let operators: OperatorService
    /// The operators' passkeys, on the console's own relying party.
    let operatorPasskeys: OperatorPasskeyService
    let verifications: VerificationService
    let sessions: SessionService
    /// Sign-in codes and step-up.
    let auth: AuthService
    let possession: PossessionService
    /// Which proof each sign-in or flow used, per project and day.
    let proofs: ProofActivityService
    let appVerifications: AppVerificationService
    let passkeys: PasskeyService
    /// Sign-up and sign-in by passkey: users and sessions joined to the passkeys.
    let passkeyAccounts: PasskeyAccounts
    /// The hosted passkey page's links.
    let passkeyLinks: PasskeyLinkService
    let factors: FactorService
    let challenges: ChallengeService
    let twilioServices: TwilioServiceService
    let twilioPush: TwilioPush
    /// Verify Passkeys on the Twilio face.
    let twilioPasskeys: TwilioPasskeys
    /// The outbox: what was (or will be) sent, and the workers that send it.
    public let outbox: OutboxService
    let runtime: Runtime
    let httpClient: HTTPClient

    /// Opens the database (running migrations), loads the master key and builds every service.
    public static func open(_ configuration: ServerConfiguration, dependencies: AppDependencies = .init())
        async throws -> Verity
    {
        var logger = dependencies.logger ?? Logger(label: "verity")
        logger.logLevel = configuration.logLevel
        let masterKey = try dependencies.masterKey ?? configuration.loadMasterKey()
        let location = try dependencies.database ?? configuration.databaseLocation
        if case .sqliteFile(let path) = location {
            try ConfigurationError.createPrivateDirectory(
                (path as NSString).deletingLastPathComponent, what: "the database's directory")
        }
        let database = try await Database.open(location, logger: logger)
        do {
            return try await Verity(
                database: database, configuration: configuration, masterKey: masterKey, dependencies: dependencies,
                logger: logger)
        } catch {
            try? await database.close()
            throw error
        }
    }

    private init(
        database: Database, configuration: ServerConfiguration, masterKey: MasterKey, dependencies: AppDependencies,
        logger: Logger
    ) async throws {
        let metrics = dependencies.metrics ?? VerityMetrics()
        let runtime = Runtime(
            clock: dependencies.clock, random: dependencies.random, metrics: metrics, logger: logger,
            maxLongPolls: configuration.maxLongPolls)
        let codes = CodeGenerator(masterKey: masterKey)
        let sealer = SecretSealer(masterKey: masterKey)
        let webhookSecrets = SecretSealer(masterKey: masterKey, purpose: "webhook-secrets")
        let projects = ProjectStore(database: database, webhookSecrets: webhookSecrets)
        let testNumberStore = TestNumberStore(
            database: database, codes: SecretSealer(masterKey: masterKey, purpose: "test-number-codes"))
        // Secrets an older version stored in plain text are sealed before the node serves anything.
        try await projects.sealPlainWebhookSecrets()
        try await testNumberStore.sealPlainCodes()

        let limiter = RateLimiter(store: RateLimitStore(database: database))
        let limits = configuration.rateLimits
        let renderer = MessageRenderer(codes: codes, publicURL: configuration.resolvedPublicURL)
        let admin = AdminService(
            projects: projects, webhookAddresses: configuration.webhookAddresses, runtime: runtime)
        let signingKeys = SigningKeyService(
            store: SigningKeyStore(database: database), sealer: sealer, runtime: runtime)
        let users = UserService(store: UserStore(database: database), runtime: runtime)
        let roles = RoleService(store: RoleStore(database: database), users: users, runtime: runtime)
        let testNumbers = TestNumberService(store: testNumberStore, runtime: runtime)
        let verifications = VerificationService(
            store: VerificationStore(database: database), limiter: limiter, limits: limits, codes: codes,
            runtime: runtime)
        let sessions = SessionService(
            store: SessionStore(database: database), users: users, roles: roles, signingKeys: signingKeys,
            publicURL: configuration.resolvedPublicURL, runtime: runtime)
        let accounts = UserAccounts(users: users, roles: roles, sessions: sessions, logger: logger)
        let factors = FactorService(store: FactorStore(database: database), sealer: sealer, runtime: runtime)
        let challenges = ChallengeService(
            store: ChallengeStore(database: database), factors: factors, accounts: accounts, runtime: runtime)
        let twilioServices = TwilioServiceService(store: TwilioServiceStore(database: database), runtime: runtime)
        let appVerifications = AppVerificationService(
            store: AppVerificationStore(database: database), key: masterKey.derived(for: "app-verification"),
            limiter: limiter,
            appAttest: AppAttestService(
                store: AppAttestStore(database: database),
                verifier: AppAttestVerifier(
                    roots: try dependencies.appAttestRoots ?? [AppleAppAttestationRoot.certificate()]),
                limiter: limiter, runtime: runtime),
            runtime: runtime)

        self.database = database
        self.metrics = metrics
        self.admin = admin
        self.signingKeys = signingKeys
        self.users = users
        self.roles = roles
        self.accounts = accounts
        self.testNumbers = testNumbers
        self.firebaseProjects = FirebaseProjects(
            store: FirebaseProjectStore(database: database), admin: admin, runtime: runtime)
        self.verifications = verifications
        self.sessions = sessions
        self.passkeys = PasskeyService(store: PasskeyStore(database: database), sessions: sessions, runtime: runtime)
        self.passkeyAccounts = PasskeyAccounts(passkeys: self.passkeys, users: users, sessions: sessions)
        self.passkeyLinks = PasskeyLinkService(
            store: PasskeyLinkStore(database: database), passkeys: passkeys, users: users,
            sealer: SecretSealer(masterKey: masterKey, purpose: "passkey-link-sessions"),
            publicURL: configuration.resolvedPublicURL, identifiers: runtime.identifiers, clock: runtime.clock,
            logger: logger)
        self.auth = AuthService(
            verifications: verifications, sessions: sessions, testNumbers: testNumbers, users: users,
            factors: factors, challenges: challenges, appVerifications: appVerifications, limiter: limiter,
            limits: limits, runtime: runtime)
        self.possession = PossessionService(
            store: PossessionStore(database: database), verifications: verifications, testNumbers: testNumbers,
            appVerifications: appVerifications, renderer: renderer, silent: dependencies.silentPossession,
            carrier: CamaraNumberVerification(
                httpClient: HTTPEventSender.webhookClient,
                addresses: configuration.webhookAddresses,
                redirectURI: configuration.resolvedPublicURL + CamaraNumberVerification.callbackPath,
                pkceKey: masterKey.derived(for: "carrier-pkce"), logger: logger),
            projects: admin, runtime: runtime)
        self.proofs = ProofActivityService(store: ProofActivityStore(database: database), clock: runtime.clock)
        self.appVerifications = appVerifications
        self.factors = factors
        self.challenges = challenges
        self.twilioServices = twilioServices
        self.twilioPush = TwilioPush(
            store: TwilioPushStore(database: database), webhooks: TwilioWebhookStore(database: database),
            services: twilioServices, factors: factors, challenges: challenges, admin: admin,
            webhookAddresses: configuration.webhookAddresses, runtime: runtime)
        self.twilioPasskeys = TwilioPasskeys(
            store: TwilioPasskeyStore(database: database), passkeys: passkeys, users: users, push: twilioPush,
            random: runtime.random, clock: runtime.clock)
        self.outbox = OutboxService(
            store: OutboxStore(database: database, webhookSecrets: webhookSecrets), renderer: renderer,
            runtime: runtime)
        self.operators = OperatorService(
            store: OperatorStore(database: database),
            totpSecrets: SecretSealer(masterKey: masterKey, purpose: "console-totp"), runtime: runtime)
        self.operatorPasskeys = OperatorPasskeyService(
            store: OperatorPasskeyStore(database: database), operators: operators,
            publicURL: configuration.resolvedPublicURL, identifiers: runtime.identifiers, clock: runtime.clock,
            logger: logger)
        self.runtime = runtime
        self.httpClient = dependencies.httpClient ?? .shared
    }

    /// The housekeeping that runs beside the server, every `interval`.
    func housekeeping(interval: Duration) -> HousekeepingService {
        HousekeepingService(
            challenges: challenges, factors: factors, sessions: sessions, verifications: verifications,
            interval: interval, logger: logger)
    }

    /// The outbox worker that delivers through `senders`.
    func outboxWorker(senders: Senders, configuration: OutboxConfiguration) -> OutboxWorker {
        outbox.worker(
            senders: senders, configuration: configuration, verifications: verifications, factors: factors,
            appVerifications: appVerifications)
    }

    /// What reads providers' delivery-status callbacks, authenticated by `settings`.
    func deliveryStatus(settings: DeliveryStatusSettings) -> DeliveryStatusReceiver {
        outbox.deliveryStatus(settings: settings, verifications: verifications)
    }
}

extension Senders {
    /// The senders the configuration names. Providers are called through `httpClient` (tenants' event webhooks
    /// through their own client, which never follows a redirect); every sender reads the time from `clock`.
    static func make(
        _ configuration: ServerConfiguration, httpClient: HTTPClient, clock: any TimeSource, logger: Logger
    ) -> Senders {
        let now: @Sendable () -> Date = { clock.now() }
        let provider = ProviderClient(httpClient: httpClient, logger: logger, now: now)
        let console = ConsoleSender(logger: logger)
        var configuration = configuration
        // Twilio reports late failures (no WhatsApp, no answer) to the status callback; it must be able to reach it.
        if let callback = configuration.twilioStatusCallbackURL {
            if case .twilio(var account) = configuration.sms {
                account.statusCallbackURL = callback
                configuration.sms = .twilio(account)
            }
            if case .twilio(var account) = configuration.voice {
                account.statusCallbackURL = callback
                configuration.voice = .twilio(account)
            }
            if case .twilio(var whatsapp) = configuration.whatsapp {
                whatsapp.account.statusCallbackURL = callback
                configuration.whatsapp = .twilio(whatsapp)
            }
        }
        let (sms, smsName): (any MessageSender, String) =
            switch configuration.sms {
            case .console: (console, "console")
            case .twilio(let twilio):
                (TwilioSMSSender(configuration: twilio, provider: provider), "twilio")
            case .webhook(let webhook):
                (WebhookSMSSender(configuration: webhook, provider: provider), "webhook")
            }
        let (email, emailName): (any MessageSender, String) =
            switch configuration.email {
            case .console: (console, "console")
            case .smtp(let smtp): (SMTPEmailSender(configuration: smtp, logger: logger, now: now), "smtp")
            }
        let (voice, voiceName): (any MessageSender, String) =
            switch configuration.voice {
            case .console: (console, "console")
            case .twilio(let twilio): (TwilioVoiceSender(configuration: twilio, provider: provider), "twilio")
            case .webhook(let webhook): (WebhookVoiceSender(configuration: webhook, provider: provider), "webhook")
            }
        let (whatsapp, whatsappName): (any MessageSender, String) =
            switch configuration.whatsapp {
            case .console: (console, "console")
            case .meta(let meta): (MetaWhatsAppSender(configuration: meta, provider: provider), "meta")
            case .twilio(let twilio): (TwilioWhatsAppSender(configuration: twilio, provider: provider), "twilio")
            }
        return Senders(
            sms: sms, smsName: smsName, email: email, emailName: emailName,
            push: PushRouter(
                apns: configuration.apns.map { APNsPushSender(configuration: $0, provider: provider) },
                fcm: configuration.fcm.map { FCMPushSender(configuration: $0, provider: provider) },
                console: ConsolePushSender(logger: logger)),
            pushName: "push",
            events: HTTPEventSender(addresses: configuration.webhookAddresses, logger: logger, now: now),
            voice: voice, voiceName: voiceName, whatsapp: whatsapp, whatsappName: whatsappName)
    }
}
