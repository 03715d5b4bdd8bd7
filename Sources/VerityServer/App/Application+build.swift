import Hummingbird
import Logging
import NIOCore
import VerityCore

/// Builds the Verity HTTP application: what `verity serve` runs and what the tests drive.
public func buildApplication(
    _ configuration: ServerConfiguration, dependencies: AppDependencies = .init()
) async throws -> some ApplicationProtocol {
    let verity = try await Verity.open(configuration, dependencies: dependencies)
    do {
        try await warnOfFirebaseEmulatorAdmin(configuration, verity: verity)
        return try buildApplication(configuration, verity: verity, senders: dependencies.senders)
    } catch {
        try? await verity.database.close()
        throw error
    }
}

/// A warning at start for each project that opted in to the Firebase emulator's admin side (`Bearer owner` and the
/// list of pending codes): it belongs on a development server only, and an operator must see it is on. With the
/// server's switch on and no project opted in, one warning says the switch serves nothing yet.
func warnOfFirebaseEmulatorAdmin(_ configuration: ServerConfiguration, verity: Verity) async throws {
    guard configuration.firebaseFace else { return }
    let optedIn = try await verity.admin.listProjects().filter { $0.settings.firebaseEmulatorAdmin != .off }
    if configuration.firebaseEmulatorAdmin, optedIn.isEmpty {
        verity.logger.warning(
            """
            VERITY_FIREBASE_EMULATOR_ADMIN is on but no project has opted in, so it serves nothing until one does:\
             verity admin project update <id> --firebase-emulator-admin test_numbers (or the console's project page)
            """)
    }
    for project in optedIn {
        verity.logger.warning(
            """
            Project \(project.id) has the Firebase emulator admin on (\(project.settings.firebaseEmulatorAdmin.rawValue)):\
             loopback clients administer it with Bearer owner and read its pending codes\
            \(configuration.firebaseEmulatorAdmin ? "" : " once VERITY_FIREBASE_EMULATOR_ADMIN=true (now off, so not served)").\
             Development only: turn it off with verity admin project update \(project.id) --firebase-emulator-admin off
            """)
    }
}

/// Builds the application around an already opened node (tests seed it through `verity.admin` first).
/// The application closes `verity`'s database when it shuts down.
public func buildApplication(
    _ configuration: ServerConfiguration, verity: Verity, senders: Senders? = nil
) throws -> some ApplicationProtocol {
    let logger = verity.logger
    let senders =
        senders ?? Senders.make(configuration, httpClient: verity.httpClient, clock: verity.clock, logger: logger)
    let host = configuration.host
    senders.logDelivery(host: host, logger: logger)
    return Application(
        router: try buildRouter(configuration, verity: verity),
        server: .http1(configuration: .init(idleTimeout: TimeAmount(configuration.idleTimeout))),
        configuration: .init(address: .hostname(host, port: configuration.port), serverName: "Verity"),
        services: [
            DatabaseService(database: verity.database, metrics: verity.metrics),
            verity.outboxWorker(senders: senders, configuration: configuration.outbox),
            verity.housekeeping(interval: configuration.housekeepingInterval),
        ],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.notice(
                "Verity is listening on http://\(host):\(port). Create a project with: verity admin project create --name \"My App\"",
                metadata: ["version": "\(VerityRelease.version)"])
        },
        logger: logger)
}

/// Every route of the API, behind the middleware that applies to it; each controller gets the services it calls.
func buildRouter(_ configuration: ServerConfiguration, verity: Verity) throws -> Router<VerityRequestContext> {
    let router = Router(context: VerityRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestIDMiddleware())
    router.add(
        middleware: ClientAddressMiddleware(
            trusted: configuration.trustedProxies,
            header: TrustedProxies.Header(rawValue: configuration.trustedProxyHeader) ?? .xForwardedFor))
    router.add(middleware: RequestMetricsMiddleware(metrics: verity.metrics))
    router.add(
        middleware: FaceErrorMiddleware<VerityRequestContext, ProblemWording>(
            wording: ProblemWording(clock: verity.clock), logger: verity.logger))
    ServiceController(metrics: verity.metrics, database: verity.database)
        .addRoutes(to: router)
    let admin = verity.admin
    let authenticated = router.group("v1").add(middleware: ProjectAuthenticator.apiKey(admin))
    VerificationController(service: verity.verifications).addRoutes(to: authenticated.group("verifications"))
    FactorController(factors: verity.factors, challenges: verity.challenges).addRoutes(to: authenticated)
    UserController(users: verity.users, accounts: verity.accounts).addRoutes(to: authenticated)
    ProjectController(admin: admin).addRoutes(to: authenticated)
    RoleController(roles: verity.roles, testNumbers: verity.testNumbers, sessions: verity.sessions).addRoutes(
        to: authenticated)
    PossessionController(possession: verity.possession, admin: admin).addRoutes(
        backend: authenticated, router: router)
    InstantLinkPageController(possession: verity.possession, admin: admin).addRoutes(to: router)
    PasskeyLinkController(links: verity.passkeyLinks, admin: admin).addRoutes(backend: authenticated, router: router)
    AuthController(auth: verity.auth, sessions: verity.sessions, appVerifications: verity.appVerifications).addRoutes(
        to: router.group("v1/auth").add(middleware: ProjectAuthenticator.projectHeader(admin)))
    PasskeyController(
        passkeys: verity.passkeys, sessions: verity.sessions, users: verity.users, auth: verity.auth
    ).addRoutes(
        app: router.group("v1/auth/passkeys").add(middleware: ProjectAuthenticator.projectHeader(admin)),
        backend: authenticated)
    AppAttestController(appAttest: verity.appVerifications.appAttest).addRoutes(
        to: router.group("v1/auth/app-attest").add(middleware: ProjectAuthenticator.projectHeader(admin)))
    WellKnownController(
        signingKeys: verity.signingKeys, admin: admin, publicURL: configuration.resolvedPublicURL
    ).addRoutes(to: router)
    DeviceController(factors: verity.factors, challenges: verity.challenges).addRoutes(
        enrollment: router.group("v1/device/factors"),
        signed: router.group("v1/device/factors/:factorId").add(
            middleware: DeviceAuthenticator(factors: verity.factors)),
        answering: router.group("v1/device/factors/:factorId/challenges/:challengeId/respond").add(
            middleware: DeviceAuthenticator(factors: verity.factors, answering: verity.challenges)))
    DeliveryStatusController(
        receiver: verity.deliveryStatus(settings: configuration.deliveryStatus),
        publicURL: configuration.resolvedPublicURL
    ).addRoutes(to: router)
    if let prefix = configuration.twilioVerifyPrefix {
        TwilioFace(
            services: verity.twilioServices, push: verity.twilioPush, passkeys: verity.twilioPasskeys,
            verifications: verity.verifications,
            possessions: verity.possession, admin: admin, runtime: verity.runtime, prefix: prefix,
            publicURL: configuration.resolvedPublicURL
        ).addRoutes(to: router)
    }
    if let prefix = configuration.descopePrefix {
        DescopeFace(
            auth: verity.auth, sessions: verity.sessions, users: verity.users, roles: verity.roles,
            accounts: verity.accounts, passkeys: verity.passkeyAccounts,
            signingKeys: verity.signingKeys, projects: DescopeProjects(admin: admin), runtime: verity.runtime,
            prefix: prefix,
            secureCookies: HTTPCookie.isSecure(publicURL: configuration.resolvedPublicURL)
        ).addRoutes(to: router)
    }
    if configuration.firebaseFace {
        FirebaseFace(
            projects: verity.firebaseProjects, auth: verity.auth, sessions: verity.sessions, logger: verity.logger
        ).addRoutes(to: router)
        FirebaseAdminFace(
            projects: verity.firebaseProjects, admin: admin, users: verity.users, accounts: verity.accounts,
            sessions: verity.sessions, verifications: verity.verifications, testNumbers: verity.testNumbers,
            acceptsEmulatorOwner: configuration.firebaseEmulatorAdmin,
            logger: verity.logger
        ).addRoutes(to: router)
    }
    if configuration.console {
        let console = router.group("console").add(
            middleware: FaceErrorMiddleware<VerityRequestContext, ConsoleWording>(
                wording: ConsoleWording(), logger: verity.logger))
        let front = ConsoleController(
            operators: verity.operators, secureCookies: HTTPCookie.isSecure(publicURL: configuration.resolvedPublicURL))
        front.addRoutes(to: console)
        ConsoleOperationsController(
            console: front, verifications: verity.verifications, outbox: verity.outbox, proofs: verity.proofs
        ).addRoutes(to: console)
        ConsoleProjectsController(
            console: front, admin: admin, users: verity.users, accounts: verity.accounts, sessions: verity.sessions,
            roles: verity.roles,
            testNumbers: verity.testNumbers, factors: verity.factors
        ).addRoutes(to: console)
        ConsoleFacesController(
            console: front, admin: admin, sessions: verity.sessions, twilioServices: verity.twilioServices,
            twilioPush: verity.twilioPush
        ).addRoutes(to: console)
        ConsoleFlowsController(
            console: front, admin: admin, challenges: verity.challenges, possession: verity.possession,
            proofs: verity.proofs
        ).addRoutes(to: console)
        ConsolePasskeysController(console: front, passkeys: verity.operatorPasskeys).addRoutes(to: console)
    }
    // Last: it wraps only the not-found responder, and needs every route.
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
    return router
}
