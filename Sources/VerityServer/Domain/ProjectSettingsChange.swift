import Foundation
import VerityCore

/// A change to a project's settings, parsed from the text an operator types: the console's settings form and the
/// `verity admin project create/update` options read the same words the same way. A setting left out stays as it is.
///
/// Every value is trimmed. `none` and an empty value mean the same thing, nothing: no channel turned off, no fallback
/// channel, no Descope project id, no App Attest team or bundle id, no response to unusual activity beyond the event, the emulator admin off. The SMS
/// region allow-list is the exception, because an empty allow-list would silently stop every SMS: it takes region
/// codes or `all`, and a project that sends no SMS turns the sms channel off instead.
public struct ProjectSettingsChange: Sendable {
    /// The settings that have a text form; the raw value is the console form's field name.
    public enum Setting: String, Sendable, CaseIterable {
        case codeLength, codeLifetime, allowedCountries, sessionLifetime, refreshLifetime, possessionLifetime
        case possessionCodeLifetime, requiresAppVerification, disabledChannels, fallbackChannel
        case unusualActivityResponse, descopeCookies, descopeProjectId, firebaseEmulatorAdmin
        case carrierCheck, carrierAuthorizationUrl, carrierTokenUrl, carrierApiUrl, carrierClientId
        case carrierClientSecret, carrierScope, carrierNumberFormat, carrierTimeout
        case appAttest, appAttestTeamId, appAttestBundleId, appAttestEnvironment
        case passkeyRpId, passkeyRpName, passkeyOrigins, passkeyAttachment, passkeyResidentKey
        case passkeyUserVerification, passkeyAttestation, passkeyChallengeLifetime
        case passkeyAppleAppIds, passkeyAndroidPackages
        case passkeyAttestationRoots
    }

    private var edits: [@Sendable (inout ProjectSettings) -> Void] = []

    /// Parses each setting's text, or says which value is wrong and what it may be. Ranges and the rules between
    /// settings are ``ProjectSettings/validated()``'s, checked when the project is saved.
    public init(_ text: [Setting: String]) throws(ConfigurationError) {
        for setting in Setting.allCases {
            guard let value = text[setting]?.trimmingCharacters(in: .whitespacesAndNewlines) else { continue }
            edits.append(try Self.edit(setting, value))
        }
    }

    /// Writes the parsed values into `settings`.
    public func apply(to settings: inout ProjectSettings) {
        for edit in edits { edit(&settings) }
    }

    private static func edit(_ setting: Setting, _ value: String) throws(ConfigurationError)
        -> @Sendable (inout ProjectSettings) -> Void
    {
        switch setting {
        case .codeLength:
            let number = try integer(value, "Code length")
            return { $0.codeLength = number }
        case .codeLifetime:
            let number = try integer(value, "Code lifetime")
            return { $0.codeLifetime = number }
        case .sessionLifetime:
            let number = try integer(value, "Session lifetime")
            return { $0.sessionLifetime = number }
        case .refreshLifetime:
            let number = try integer(value, "Refresh token lifetime")
            return { $0.refreshLifetime = number }
        case .possessionLifetime:
            let number = try integer(value, "Possession check lifetime")
            return { $0.possessionLifetime = number }
        case .possessionCodeLifetime:
            let number = try integer(value, "Possession code lifetime")
            return { $0.possessionCodeLifetime = number }
        case .allowedCountries:
            let countries = try regions(value)
            return { $0.allowedCountries = countries }
        case .requiresAppVerification:
            let required = try choice(value, off: "optional", on: "required")
            return { $0.requiresAppVerification = required }
        case .descopeCookies:
            let cookies = try choice(value, off: "off", on: "on")
            return { $0.descopeCookies = cookies }
        case .disabledChannels:
            let channels = try channels(value)
            return { $0.disabledChannels = channels }
        case .fallbackChannel:
            // The project's own rules (a phone channel, one that is turned on) are checked when it is saved.
            let fallback = try isNone(value) ? nil : channel(value)
            return { $0.fallbackChannel = fallback }
        case .unusualActivityResponse:
            let response =
                try isNone(value) ? .none : named(value, UnusualActivityResponse.self, "a response to unusual activity")
            return { $0.unusualActivityResponse = response }
        case .descopeProjectId:
            let id = isNone(value) ? nil : value
            return { $0.descopeProjectId = id }
        case .firebaseEmulatorAdmin:
            let admin =
                try isNone(value) ? .off : named(value, FirebaseEmulatorAdmin.self, "a Firebase emulator admin setting")
            return { $0.firebaseEmulatorAdmin = admin }
        case .carrierCheck:
            let enabled = try choice(value, off: "off", on: "on")
            return { $0.carrierCheck.enabled = enabled }
        case .carrierAuthorizationUrl: return { $0.carrierCheck.authorizationURL = value }
        case .carrierTokenUrl: return { $0.carrierCheck.tokenURL = value }
        case .carrierApiUrl: return { $0.carrierCheck.apiURL = value }
        case .carrierClientId: return { $0.carrierCheck.clientId = value }
        case .carrierClientSecret:
            let secret = isNone(value) ? nil : value
            return { $0.carrierCheck.clientSecret = secret }
        case .carrierScope:
            let scope = isNone(value) ? CarrierCheckSettings.defaultScope : value
            return { $0.carrierCheck.scope = scope }
        case .carrierNumberFormat:
            let format = try named(value, CarrierCheckSettings.NumberFormat.self, "a carrier number format")
            return { $0.carrierCheck.numberFormat = format }
        case .carrierTimeout:
            let seconds = try integer(value, "Carrier check timeout")
            return { $0.carrierCheck.timeout = seconds }
        case .appAttest:
            let enabled = try choice(value, off: "off", on: "on")
            return { $0.appAttestEnabled = enabled }
        case .appAttestTeamId:
            let id = isNone(value) ? nil : value
            return { $0.appAttestTeamId = id }
        case .appAttestBundleId:
            let id = isNone(value) ? nil : value
            return { $0.appAttestBundleId = id }
        case .appAttestEnvironment:
            let environment = try named(value, AppAttestEnvironment.self, "an App Attest environment")
            return { $0.appAttestEnvironment = environment }
        case .passkeyRpId:
            // `none` turns passkeys off; an id turns them on, and the name and origins must come with it.
            if isNone(value) { return { $0.passkeys = nil } }
            return { settings in settings.editPasskeys { $0.rpID = value } }
        case .passkeyRpName: return { settings in settings.editPasskeys { $0.rpName = value } }
        case .passkeyOrigins:
            let origins = Self.list(value)
            return { settings in settings.editPasskeys { $0.origins = origins } }
        case .passkeyAppleAppIds:
            let ids = Self.list(value)
            return { settings in settings.editPasskeys { $0.appleAppIDs = ids.isEmpty ? nil : ids } }
        case .passkeyAndroidPackages:
            let packages = Self.list(value)
            return { settings in settings.editPasskeys { $0.androidPackages = packages.isEmpty ? nil : packages } }
        case .passkeyAttachment:
            let attachment =
                try isNone(value) ? nil : named(value, PasskeySettings.Attachment.self, "an authenticator attachment")
            return { settings in settings.editPasskeys { $0.attachment = attachment } }
        case .passkeyResidentKey:
            let requirement = try named(value, PasskeySettings.Requirement.self, "a resident-key requirement")
            return { settings in settings.editPasskeys { $0.residentKey = requirement } }
        case .passkeyUserVerification:
            let requirement = try named(value, PasskeySettings.Requirement.self, "a user-verification requirement")
            return { settings in settings.editPasskeys { $0.userVerification = requirement } }
        case .passkeyAttestation:
            let attestation = try named(value, PasskeySettings.Attestation.self, "an attestation preference")
            return { settings in settings.editPasskeys { $0.attestation = attestation } }
        case .passkeyAttestationRoots:
            // PEM certificates; `none` trusts none. ``PasskeySettings/validated()`` checks that they parse.
            let roots = isNone(value) ? nil : value
            return { settings in settings.editPasskeys { $0.attestationRoots = roots } }
        case .passkeyChallengeLifetime:
            let seconds = try integer(value, "Passkey challenge lifetime")
            return { settings in settings.editPasskeys { $0.challengeLifetime = seconds } }
        }
    }

    private static func isNone(_ value: String) -> Bool {
        value.isEmpty || value.lowercased() == "none"
    }

    /// A comma-separated list, trimmed, without empty items; `none` is the empty list.
    private static func list(_ value: String) -> [String] {
        isNone(value)
            ? [] : value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func integer(_ value: String, _ what: String) throws(ConfigurationError) -> Int {
        guard let number = Int(value) else { throw ConfigurationError("\(what) must be a whole number.") }
        return number
    }

    /// A two-way choice: false for `off` or `false`, true for `on` or `true`.
    private static func choice(_ value: String, off: String, on: String) throws(ConfigurationError) -> Bool {
        switch value.lowercased() {
        case off, "false": return false
        case on, "true": return true
        default: throw ConfigurationError("'\(value)' is neither \(off) nor \(on).")
        }
    }

    /// Channels separated by commas; `none` or empty for none.
    private static func channels(_ value: String) throws(ConfigurationError) -> [Channel] {
        var channels: [Channel] = []
        if !isNone(value) {
            for name in value.split(separator: ",") { channels.append(try channel(String(name))) }
        }
        return channels
    }

    private static func channel(_ name: String) throws(ConfigurationError) -> Channel {
        try named(name.trimmingCharacters(in: .whitespaces), Channel.self, "a channel")
    }

    private static func named<Value: RawRepresentable<String> & CaseIterable>(
        _ name: String, _: Value.Type, _ what: String
    ) throws(ConfigurationError) -> Value {
        guard let value = Value(rawValue: name.lowercased()) else {
            let names = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError("'\(name)' is not \(what) (\(names)).")
        }
        return value
    }

    /// `all` for every region, else ISO region codes separated by commas; ``ProjectSettings/validated()`` checks
    /// each code.
    private static func regions(_ value: String) throws(ConfigurationError) -> [String]? {
        if value.lowercased() == "all" { return nil }
        let codes = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
            .filter { !$0.isEmpty }
        guard !codes.isEmpty else {
            throw ConfigurationError(
                "Allowed countries takes region codes such as US,CA,GB, or all for every region; "
                    + "to send no SMS, turn the sms channel off.")
        }
        return codes
    }
}

extension ProjectSettings {
    /// Edits the relying party, starting from an empty one while passkeys are off: a project that names only some of
    /// the relying party's settings is refused by ``validated()``, which names what is missing.
    fileprivate mutating func editPasskeys(_ edit: (inout PasskeySettings) -> Void) {
        var relyingParty = passkeys ?? PasskeySettings(rpID: "", rpName: "", origins: [])
        edit(&relyingParty)
        passkeys = relyingParty
    }
}
