import ArgumentParser
import Foundation
import VerityCore
import VerityServer

/// Project settings flags, shared by `create` and `update`. Their text is read by ``ProjectSettingsChange``, as the
/// console's settings form is.
struct ProjectSettingsOptions: ParsableArguments {
    @Option(help: "Digits in a code, 4 to 10 (default 6).")
    var codeLength: String?

    @Option(help: "How long a code stays valid, in seconds, 60 to 86400 (default 600).")
    var codeLifetime: String?

    @Option(help: "Comma-separated ISO region codes SMS may go to, e.g. US,CA,GB; `all` allows every region.")
    var allowedCountries: String?

    @Option(help: "How long a session token lives, in seconds, 60 to 86400 (default 600).")
    var sessionLifetime: String?

    @Option(help: "How long an unused refresh token lives, in seconds, 3600 to 31536000 (default 2592000: 30 days).")
    var refreshLifetime: String?

    @Option(help: "How long a possession check lives, in seconds, 60 to 3600 (default 900).")
    var possessionLifetime: String?

    @Option(help: "How long a possession check's code or instant link works, in seconds, 30 to 600 (default 120).")
    var possessionCodeLifetime: String?

    @Option(
        help: """
            Whether sign-in, step-up and possession codes go only to apps that proved they are the project's app \
            (a secret delivered by silent push): true or false (default false).
            """)
    var requireAppVerification: String?

    @Option(
        help: """
            Comma-separated channels the project does not send codes by (sms, email, voice, whatsapp), e.g. voice; \
            `none` turns every channel on (default voice).
            """)
    var disabledChannels: String?

    @Option(
        help: """
            The phone channel (sms, voice or whatsapp) a code goes by once more when delivery by another phone channel \
            fails for good; `none` for no fallback (default none).
            """)
    var fallbackChannel: String?

    @Option(
        help: """
            What happens when a device reports unusual activity ("this wasn't me") besides the security event and \
            the webhook: none, revoke_sessions, suspend_factor or disable_user (default none).
            """)
    var unusualActivityResponse: String?

    @Option(
        help: """
            Whether the Descope face delivers tokens as DS/DSR cookies too (the refresh JWT then only as the \
            HttpOnly DSR cookie) and accepts the DSR cookie on its session calls: true or false (default false).
            """)
    var descopeCookies: String?

    @Option(
        help: """
            A project id the Descope face also answers to, such as the app's Descope project id (P2…), so its SDK \
            configuration keeps it; its tokens then name it as iss. `none` removes it.
            """)
    var descopeProjectId: String?

    @Option(
        help: """
            Development only: the Firebase face serves this project as the Auth emulator's admin side to loopback \
            clients, while VERITY_FIREBASE_EMULATOR_ADMIN=true: firebase-admin's Bearer owner, and the pending codes \
            at /emulator/v1/projects/<id>/verificationCodes. off, test_numbers (codes of test numbers only) or \
            all_numbers (live codes of every number) (default off).
            """)
    var firebaseEmulatorAdmin: String?

    @Option(
        help: """
            Whether a mobile possession check started with a number offers the carrier check (CAMARA Number \
            Verification through an aggregator) before a code: on or off (default off). On needs the carrier URLs, \
            client id and client secret.
            """)
    var carrierCheck: String?

    @Option(help: "The aggregator's OpenID Connect authorization endpoint, which the app opens over mobile data.")
    var carrierAuthorizationUrl: String?

    @Option(help: "The aggregator's token endpoint, where Verity exchanges the operator's code.")
    var carrierTokenUrl: String?

    @Option(help: "The Number Verification API root, up to and with its version: …/number-verification/v1.")
    var carrierApiUrl: String?

    @Option(help: "The client id the aggregator issued.")
    var carrierClientId: String?

    @Option(help: "The client secret the aggregator issued (stored sealed); `none` removes it.")
    var carrierClientSecret: String?

    @Option(
        help: """
            The scopes to ask for (default `openid dpv:FraudPreventionAndDetection number-verification:verify`; \
            `none` restores it).
            """)
    var carrierScope: String?

    @Option(help: "How the number goes to /verify: hashed (SHA-256, the default) or plain.")
    var carrierNumberFormat: String?

    @Option(help: "Seconds the token exchange and /verify may take together before a code takes over, 1 to 30 (5).")
    var carrierTimeout: String?

    @Option(
        help: """
            Whether an App Attest assertion of the project's iOS app proves the app wherever app verification asks \
            for a proof (needs --app-attest-team-id and --app-attest-bundle-id): on or off (default off).
            """)
    var appAttest: String?

    @Option(help: "The Apple developer team id of the project's iOS app, for App Attest, e.g. ABCDE12345.")
    var appAttestTeamId: String?

    @Option(help: "The bundle id of the project's iOS app, for App Attest, e.g. com.example.app.")
    var appAttestBundleId: String?

    @Option(
        help: """
            The App Attest environment of the app's keys: development (Xcode builds) or production (App Store and \
            TestFlight) (default production).
            """)
    var appAttestEnvironment: String?

    @Option(
        help: """
            The passkey relying-party id, a domain the origins belong to (e.g. example.com); none turns passkeys off. \
            Turning them on needs --passkey-rp-name and --passkey-origins too.
            """)
    var passkeyRpId: String?

    @Option(help: "The relying-party name authenticators show, 1 to 64 characters.")
    var passkeyRpName: String?

    @Option(
        help: """
            The origins passkey ceremonies may come from, separated by commas: https origins on the relying-party id \
            or a subdomain, and android:apk-key-hash: origins for Android apps.
            """)
    var passkeyOrigins: String?

    @Option(help: "The authenticator attachment asked for: platform, cross-platform, or none to let the user choose.")
    var passkeyAttachment: String?

    @Option(help: "Whether passkeys must be discoverable: discouraged, preferred (the default) or required.")
    var passkeyResidentKey: String?

    @Option(
        help: """
            Whether the authenticator must verify the user: discouraged, preferred (the default) or required, which \
            refuses an answer without user verification.
            """)
    var passkeyUserVerification: String?

    @Option(help: "The attestation asked for at registration: none (the default) or direct (packed, checked).")
    var passkeyAttestation: String?

    @Option(help: "Seconds a passkey challenge may be answered, 30 to 600 (300).")
    var passkeyChallengeLifetime: String?

    @Option(
        help: """
            The Apple apps that may use the passkeys, as TEAMID.bundle.id separated by commas (none: no app): the \
            webcredentials of /.well-known/apple-app-site-association on the relying-party id.
            """)
    var passkeyAppleAppIds: String?

    @Option(
        help: """
            The Android apps (package names, separated by commas; none: no app) that may use the passkeys: \
            /.well-known/assetlinks.json names them with the certificates of the android:apk-key-hash: origins.
            """)
    var passkeyAndroidPackages: String?

    @Option(
        help: """
            A file of PEM certificates an x5c passkey attestation must chain to (such as roots from the FIDO Metadata \
            Service), for --passkey-attestation direct; none to trust none, which refuses x5c attestations.
            """)
    var passkeyAttestationRoots: String?

    /// The options given, by the setting they change; a file option's value is the file's text.
    private func text() throws -> [ProjectSettingsChange.Setting: String] {
        var text = givenText
        if let path = passkeyAttestationRoots {
            if path.lowercased() == "none" {
                text[.passkeyAttestationRoots] = "none"
            } else {
                do { text[.passkeyAttestationRoots] = try String(contentsOfFile: path, encoding: .utf8) } catch {
                    throw ValidationError("Cannot read the passkey attestation roots from \(path).")
                }
            }
        }
        return text
    }

    private var givenText: [ProjectSettingsChange.Setting: String] {
        let given: [(ProjectSettingsChange.Setting, String?)] = [
            (.codeLength, codeLength), (.codeLifetime, codeLifetime), (.allowedCountries, allowedCountries),
            (.sessionLifetime, sessionLifetime), (.refreshLifetime, refreshLifetime),
            (.possessionLifetime, possessionLifetime), (.possessionCodeLifetime, possessionCodeLifetime),
            (.requiresAppVerification, requireAppVerification), (.disabledChannels, disabledChannels),
            (.fallbackChannel, fallbackChannel), (.unusualActivityResponse, unusualActivityResponse),
            (.descopeCookies, descopeCookies), (.descopeProjectId, descopeProjectId),
            (.firebaseEmulatorAdmin, firebaseEmulatorAdmin), (.carrierCheck, carrierCheck),
            (.carrierAuthorizationUrl, carrierAuthorizationUrl), (.carrierTokenUrl, carrierTokenUrl),
            (.carrierApiUrl, carrierApiUrl), (.carrierClientId, carrierClientId),
            (.carrierClientSecret, carrierClientSecret), (.carrierScope, carrierScope),
            (.carrierNumberFormat, carrierNumberFormat), (.carrierTimeout, carrierTimeout),
            (.appAttest, appAttest),
            (.appAttestTeamId, appAttestTeamId), (.appAttestBundleId, appAttestBundleId),
            (.appAttestEnvironment, appAttestEnvironment), (.passkeyRpId, passkeyRpId),
            (.passkeyRpName, passkeyRpName), (.passkeyOrigins, passkeyOrigins),
            (.passkeyAttachment, passkeyAttachment), (.passkeyResidentKey, passkeyResidentKey),
            (.passkeyUserVerification, passkeyUserVerification), (.passkeyAttestation, passkeyAttestation),
            (.passkeyChallengeLifetime, passkeyChallengeLifetime), (.passkeyAppleAppIds, passkeyAppleAppIds),
            (.passkeyAndroidPackages, passkeyAndroidPackages),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { setting, value in value.map { (setting, $0) } })
    }

    func validate() throws {
        do { _ = try ProjectSettingsChange(try text()) } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    /// The change the options ask for; validate() has refused any that does not parse.
    func change() throws -> ProjectSettingsChange {
        try ProjectSettingsChange(try text())
    }
}
