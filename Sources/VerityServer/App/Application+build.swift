import Hummingbird
import Logging

/// Builds the Verity HTTP application: what `verity serve` runs and what the tests drive.
public func buildApplication(
    _ configuration: ServerConfiguration, dependencies: AppDependencies = .init()
) async throws -> some ApplicationProtocol {
    let verity = try await Verity.open(configuration, dependencies: dependencies)
    do {
        return try buildApplication(configuration, verity: verity, senders: dependencies.senders)
    } catch {
        try? await verity.database.close()
        throw error
    }
}

/// Builds the application around an already opened node (tests seed it through `verity.admin` first).
/// The application closes `verity`'s database when it shuts down.
public func buildApplication(
    _ configuration: ServerConfiguration, verity: Verity, senders: Senders? = nil
) throws -> some ApplicationProtocol {
    let logger = verity.logger
    let senders = senders ?? Senders.make(configuration, logger: logger)
    let host = configuration.host
    return Application(
        router: try buildRouter(configuration, verity: verity),
        configuration: .init(address: .hostname(host, port: configuration.port), serverName: "Verity"),
        services: [
            DatabaseService(database: verity.database),
            verity.outboxWorker(senders: senders, configuration: configuration.outbox),
            verity.challengeExpiryService(interval: configuration.challengeExpiryInterval),
        ],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.notice(
                "Verity is listening on http://\(host):\(port). Create a project with: verity admin project create --name \"My App\""
            )
        },
        logger: logger)
}

/// Every route of the API, behind the middleware that applies to it.
func buildRouter(_ configuration: ServerConfiguration, verity: Verity) throws -> Router<VerityRequestContext> {
    let router = Router(context: VerityRequestContext.self)
    router.add(
        middleware: ClientAddressMiddleware(
            trusted: configuration.trustedProxies,
            header: TrustedProxies.Header(rawValue: configuration.trustedProxyHeader) ?? .xForwardedFor))
    router.add(middleware: RequestMetricsMiddleware(metrics: verity.metrics))
    router.add(middleware: ProblemMiddleware(logger: verity.logger, clock: verity.clock))
    ServiceController(metrics: verity.metrics, openAPIDocument: try ServiceController.loadOpenAPIDocument())
        .addRoutes(to: router)
    let authenticated = router.group("v1").add(middleware: APIKeyAuthenticator(projects: verity.projects))
    VerificationController(service: verity.verificationService(limits: configuration.rateLimits))
        .addRoutes(to: authenticated.group("verifications"))
    let factors = verity.factorService
    let challenges = verity.challengeService
    FactorController(factors: factors, challenges: challenges).addRoutes(to: authenticated)
    UserController(users: verity.users).addRoutes(to: authenticated)
    let auth = verity.authService(limits: configuration.rateLimits, publicURL: configuration.resolvedPublicURL)
    let sessions = verity.sessionService(publicURL: configuration.resolvedPublicURL)
    RoleController(roles: verity.roles, testNumbers: verity.testNumbers, sessions: sessions).addRoutes(
        to: authenticated)
    let possession = verity.possessionService(limits: configuration.rateLimits)
    PossessionController(possession: possession, projects: verity.projects).addRoutes(
        backend: authenticated, router: router)
    InstantLinkPageController(possession: possession, projects: verity.projects).addRoutes(to: router)
    AuthController(auth: auth, sessions: sessions).addRoutes(
        to: router.group("v1/auth").add(middleware: ProjectHeaderAuthenticator(projects: verity.projects)))
    WellKnownController(
        signingKeys: verity.signingKeys, projects: verity.projects, publicURL: configuration.resolvedPublicURL
    ).addRoutes(to: router)
    DeviceController(factors: factors, challenges: challenges).addRoutes(
        enrollment: router.group("v1/device/factors"),
        signed: router.group("v1/device/factors/:factorId").add(middleware: DeviceAuthenticator(factors: factors)))
    if let prefix = configuration.twilioVerifyPrefix {
        TwilioFace(
            verity: verity, verifications: verity.verificationService(limits: configuration.rateLimits),
            prefix: prefix, publicURL: configuration.resolvedPublicURL
        ).addRoutes(to: router)
    }
    return router
}
