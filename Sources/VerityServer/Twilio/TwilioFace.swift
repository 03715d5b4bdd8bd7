import Hummingbird
import Logging

/// The Twilio Verify v2 face: Twilio's wire protocol (form-encoded PascalCase in, snake_case JSON out, SIDs, Basic
/// auth, Twilio's error bodies and paging) over Verity's own domain, under a path prefix.
///
/// A client replaces `https://verify.twilio.com` with `<public URL><prefix>`; every resource then sits under
/// `<prefix>/v2/…` as on Twilio.
struct TwilioFace: UsesRuntime {
    let services: TwilioServiceService
    let push: TwilioPush
    let passkeys: TwilioPasskeys
    let verifications: VerificationService
    let possessions: PossessionService
    let admin: AdminService
    let runtime: Runtime
    /// `/twilio`, or empty to serve `/v2/…` at the root.
    let prefix: String
    let publicURL: String

    func addRoutes(to router: Router<VerityRequestContext>) {
        let versionPath = prefix + "/v2"
        let group = router.group(RouterPath(versionPath))
            .add(
                middleware: FaceErrorMiddleware(
                    wording: TwilioErrorWording(clock: clock, pathPrefix: versionPath), logger: logger)
            )
            .add(middleware: TwilioAuthenticator(admin: admin, push: push))
        let baseURL = publicURL + prefix
        TwilioServiceController(services: services, push: push, baseURL: baseURL).addRoutes(to: group)
        TwilioVerificationController(
            services: services, verifications: verifications, possessions: possessions, clock: clock,
            baseURL: baseURL
        ).addRoutes(to: group)
        TwilioPushController(push: push, passkeys: passkeys, services: services, clock: clock, baseURL: baseURL)
            .addRoutes(to: group)
        TwilioPasskeyController(passkeys: passkeys, services: services, clock: clock, baseURL: baseURL)
            .addRoutes(to: group)
        router.add(middleware: TwilioUnmatchedRoutes(versionPath: versionPath, clock: clock))
    }
}
