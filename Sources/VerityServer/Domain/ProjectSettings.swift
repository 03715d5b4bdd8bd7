import Foundation
import VerityCore

/// The per-project knobs of the verification rules.
public struct ProjectSettings: Sendable, Equatable, Codable {
    /// Digits in a code, 4 to 10.
    public var codeLength: Int = 6
    /// How long a code stays valid, in seconds (60 s to 24 h).
    public var codeLifetime: Int = 600
    /// ISO 3166 regions SMS may go to; `nil` allows every region.
    public var allowedCountries: [String]? = nil
    /// How long a session token lives, in seconds (60 s to 24 h).
    public var sessionLifetime: Int = 600
    /// How long a refresh token lives unused, in seconds (1 h to 365 days); each refresh starts it again.
    public var refreshLifetime: Int = 30 * 86_400
    /// How long a possession check (its auth token) lives, in seconds (60 s to 1 h).
    public var possessionLifetime: Int = 900
    /// How long a possession check's code or instant link works, in seconds (30 s to 10 min).
    public var possessionCodeLifetime: Int = 120
    /// Whether app-facing sends (sign-in, step-up and possession codes) need a proof that the request comes from the
    /// project's app: a secret delivered by silent push (``AppVerificationRequest``). Off by default.
    public var requiresAppVerification = false
    /// Channels the project does not send codes by (a request for one is refused with `channel_disabled`). A new
    /// project has `voice` off, the costliest toll-fraud surface, until an operator turns it on; projects made before
    /// that default keep what they had.
    public var disabledChannels: [Channel] = ProjectSettings.newProjectDisabledChannels
    /// The phone channel a code is sent by once more when delivery by another phone channel fails permanently (a
    /// number without WhatsApp, a carrier that refuses the SMS); nil sends nothing more.
    public var fallbackChannel: Channel? = nil
    /// What happens when a device reports unusual activity ("this wasn't me"), besides the security event and the
    /// webhook; `none` by default.
    public var unusualActivityResponse: UnusualActivityResponse = .none
    /// Whether the Descope face delivers tokens as cookies too (Descope's "manage tokens in cookies"): its answers set
    /// `DS` (the session JWT) and `DSR` (the refresh JWT, then left out of the body) and its session calls accept the
    /// `DSR` cookie. Off by default.
    public var descopeCookies = false
    /// The project id the Descope face also answers to, so an app moved from Descope keeps its Descope project id
    /// (`P2…`) in its SDK configuration: the face accepts it in the bearer value and the keys route, and its tokens
    /// name it as `iss` and `aud`. Nil for none (the Verity project id only); unique across the server.
    public var descopeProjectId: String? = nil
    /// Whether the Firebase face serves this project as the Auth emulator does for firebase-admin in development
    /// (`Bearer owner`, and the list of pending codes), to loopback clients only and while the server's
    /// `VERITY_FIREBASE_EMULATOR_ADMIN` is on too. Off by default.
    public var firebaseEmulatorAdmin: FirebaseEmulatorAdmin = .off
    /// The carrier check a mobile possession flow may pass without a code (CAMARA Number Verification); off by
    /// default.
    public var carrierCheck = CarrierCheckSettings()
    /// Whether an App Attest assertion of the project's app (``appAttestTeamId``.``appAttestBundleId``) proves the app
    /// wherever app verification asks for a proof, besides the silent push. Off by default.
    public var appAttestEnabled = false
    /// The Apple developer team id of the project's app (ten letters and digits), for App Attest.
    public var appAttestTeamId: String? = nil
    /// The bundle id of the project's app, for App Attest.
    public var appAttestBundleId: String? = nil
    /// The App Attest environment the project accepts keys of; `production` by default.
    public var appAttestEnvironment: AppAttestEnvironment = .production
    /// The project's WebAuthn relying party; nil while the project offers no passkeys (the default).
    public var passkeys: PasskeySettings? = nil

    /// The App Attest app id, `TEAMID.bundle.id`, when App Attest is on.
    public var appAttestAppId: String? {
        guard appAttestEnabled, let appAttestTeamId, let appAttestBundleId else { return nil }
        return "\(appAttestTeamId).\(appAttestBundleId)"
    }

    /// The channels a new project starts with turned off: `voice`.
    public static let newProjectDisabledChannels: [Channel] = [.voice]

    public static let codeLengthRange = 4...10
    public static let codeLifetimeRange = 60...86_400
    public static let sessionLifetimeRange = 60...86_400
    public static let refreshLifetimeRange = 3600...(365 * 86_400)
    public static let possessionLifetimeRange = 60...3600
    public static let possessionCodeLifetimeRange = 30...600

    public init(
        codeLength: Int = 6, codeLifetime: Int = 600, allowedCountries: [String]? = nil, sessionLifetime: Int = 600,
        refreshLifetime: Int = 30 * 86_400, possessionLifetime: Int = 900, possessionCodeLifetime: Int = 120,
        requiresAppVerification: Bool = false, disabledChannels: [Channel] = newProjectDisabledChannels,
        fallbackChannel: Channel? = nil,
        unusualActivityResponse: UnusualActivityResponse = .none,
        descopeCookies: Bool = false, descopeProjectId: String? = nil,
        firebaseEmulatorAdmin: FirebaseEmulatorAdmin = .off, appAttestEnabled: Bool = false,
        appAttestTeamId: String? = nil, appAttestBundleId: String? = nil,
        appAttestEnvironment: AppAttestEnvironment = .production
    ) {
        self.firebaseEmulatorAdmin = firebaseEmulatorAdmin
        self.appAttestEnabled = appAttestEnabled
        self.appAttestTeamId = appAttestTeamId
        self.appAttestBundleId = appAttestBundleId
        self.appAttestEnvironment = appAttestEnvironment
        self.unusualActivityResponse = unusualActivityResponse
        self.codeLength = codeLength
        self.codeLifetime = codeLifetime
        self.allowedCountries = allowedCountries
        self.sessionLifetime = sessionLifetime
        self.refreshLifetime = refreshLifetime
        self.possessionLifetime = possessionLifetime
        self.possessionCodeLifetime = possessionCodeLifetime
        self.requiresAppVerification = requiresAppVerification
        self.disabledChannels = disabledChannels
        self.fallbackChannel = fallbackChannel
        self.descopeCookies = descopeCookies
        self.descopeProjectId = descopeProjectId
    }

    /// Whether the project sends codes by `channel`.
    public func sends(by channel: Channel) -> Bool {
        !disabledChannels.contains(channel)
    }

    /// Whether a project may be given `id` as its Descope project id: 1 to 64 letters, digits, `-` and `_`, not
    /// starting `prj_` (which names Verity's own).
    static func isDescopeProjectId(_ id: String) -> Bool {
        (1...64).contains(id.count) && !id.hasPrefix("prj_")
            && id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    }

    /// Checks every setting; the message names the first one that is out of range.
    public func validated() throws(ConfigurationError) -> ProjectSettings {
        func require(_ value: Int, in range: ClosedRange<Int>, _ message: String) throws(ConfigurationError) {
            guard range.contains(value) else { throw ConfigurationError(message) }
        }
        try require(codeLength, in: Self.codeLengthRange, "The code length must be between 4 and 10 digits.")
        try require(codeLifetime, in: Self.codeLifetimeRange, "The code lifetime must be between 60 and 86400 seconds.")
        try require(
            sessionLifetime, in: Self.sessionLifetimeRange, "The session lifetime must be between 60 and 86400 seconds."
        )
        try require(
            refreshLifetime, in: Self.refreshLifetimeRange,
            "The refresh token lifetime must be between 3600 seconds and 365 days.")
        try require(
            possessionLifetime, in: Self.possessionLifetimeRange,
            "The possession check lifetime must be between 60 and 3600 seconds.")
        try require(
            possessionCodeLifetime, in: Self.possessionCodeLifetimeRange,
            "The possession code lifetime must be between 30 and 600 seconds.")
        if let fallbackChannel {
            guard fallbackChannel.reachesPhone else {
                throw ConfigurationError("The fallback channel must be sms, voice or whatsapp: a phone channel.")
            }
            guard sends(by: fallbackChannel) else {
                throw ConfigurationError("The fallback channel \(fallbackChannel.rawValue) is turned off.")
            }
        }
        if let descopeProjectId {
            guard Self.isDescopeProjectId(descopeProjectId) else {
                throw ConfigurationError(
                    "A Descope project id has 1 to 64 letters, digits, - and _, and does not start with prj_.")
            }
        }
        if let appAttestTeamId {
            guard appAttestTeamId.count == 10,
                appAttestTeamId.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) })
            else { throw ConfigurationError("An App Attest team id is ten capital letters and digits.") }
        }
        if let appAttestBundleId {
            guard (1...155).contains(appAttestBundleId.count),
                appAttestBundleId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { throw ConfigurationError("An App Attest bundle id is 1 to 155 letters, digits, . and -.") }
        }
        if appAttestEnabled, appAttestTeamId == nil || appAttestBundleId == nil {
            throw ConfigurationError("App Attest needs the app's team id and bundle id.")
        }
        var copy = self
        copy.carrierCheck = try carrierCheck.validated()
        copy.passkeys = try passkeys?.validated()
        copy.disabledChannels = Channel.allCases.filter(disabledChannels.contains)
        if let countries = allowedCountries {
            let normalised = countries.map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter {
                !$0.isEmpty
            }
            for region in normalised where region.count != 2 || !region.allSatisfy({ $0.isASCII && $0.isLetter }) {
                throw ConfigurationError("'\(region)' is not an ISO 3166-1 alpha-2 region code such as US or GB.")
            }
            copy.allowedCountries = Array(Set(normalised)).sorted()
        }
        return copy
    }
}
