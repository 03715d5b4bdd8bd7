import Foundation
import VerityCore

/// A Twilio service's `Passkeys.*` settings, or a passkey factor's `config`: any of them may be unset. A factor's config
/// is laid over its service's, and a ceremony needs all of them; the Domain's ``PasskeySettings`` is what they become.
struct TwilioPasskeyConfig: Sendable, Equatable, Codable {
    var rpID: String?
    var rpName: String?
    /// Origins as given; an origin without a scheme (`login.example.com`, as Twilio's examples write them) means
    /// `https://`.
    var origins: [String]?
    /// `platform`, `cross-platform` or `any`.
    var authenticatorAttachment: String?
    var discoverableCredentials: PasskeySettings.Requirement?
    var userVerification: PasskeySettings.Requirement?

    /// Nothing is set.
    var isEmpty: Bool { self == TwilioPasskeyConfig() }

    /// The values Twilio takes for `AuthenticatorAttachment`.
    static let attachments = ["platform", "cross-platform", "any"]

    /// Applies the `Passkeys.*` parameters of a service create or update; an empty value unsets one.
    mutating func apply(_ form: TwilioForm) throws {
        if let id = form.string("Passkeys.RelyingParty.Id") { rpID = id.isEmpty ? nil : id }
        if let name = form.string("Passkeys.RelyingParty.Name") { rpName = name.isEmpty ? nil : name }
        if let origins = form.string("Passkeys.RelyingParty.Origins") {
            let list = origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            self.origins = list.isEmpty ? nil : list
        }
        if let attachment = form.string("Passkeys.AuthenticatorAttachment") {
            authenticatorAttachment = try Self.attachment(attachment, "Passkeys.AuthenticatorAttachment")
        }
        if let value = form.string("Passkeys.DiscoverableCredentials") {
            discoverableCredentials = try Self.requirement(value, "Passkeys.DiscoverableCredentials")
        }
        if let value = form.string("Passkeys.UserVerification") {
            userVerification = try Self.requirement(value, "Passkeys.UserVerification")
        }
        // A complete relying party is checked now, so a service never holds one no ceremony could use.
        if rpID != nil, rpName != nil, origins != nil { _ = try relyingParty(parameter: "Passkeys.RelyingParty") }
    }

    /// A factor's JSON `config`, checked as the service's parameters are.
    init(factorConfig config: FactorConfig) throws {
        rpID = config.relyingParty?.id
        rpName = config.relyingParty?.name
        origins = config.relyingParty?.origins
        authenticatorAttachment = try config.authenticatorAttachment.flatMap {
            try Self.attachment($0, "config.authenticator_attachment")
        }
        discoverableCredentials = try config.discoverableCredentials.flatMap {
            try Self.requirement($0, "config.discoverable_credentials")
        }
        userVerification = try config.userVerification.flatMap { try Self.requirement($0, "config.user_verification") }
    }

    init() {}

    /// This config with `base`'s values where this one has none.
    func overlaid(on base: TwilioPasskeyConfig) -> TwilioPasskeyConfig {
        var merged = self
        merged.rpID = rpID ?? base.rpID
        merged.rpName = rpName ?? base.rpName
        merged.origins = origins ?? base.origins
        merged.authenticatorAttachment = authenticatorAttachment ?? base.authenticatorAttachment
        merged.discoverableCredentials = discoverableCredentials ?? base.discoverableCredentials
        merged.userVerification = userVerification ?? base.userVerification
        return merged
    }

    /// The relying party of a ceremony: 60393 naming the authenticator criteria that are missing, 60200 for a relying
    /// party that is missing or that ``PasskeySettings/validated()`` refuses.
    func settings() throws -> PasskeySettings {
        let missing = [
            ("authenticator_attachment", authenticatorAttachment == nil),
            ("discoverable_credentials", discoverableCredentials == nil),
            ("user_verification", userVerification == nil),
        ].filter(\.1).map(\.0)
        guard missing.isEmpty else { throw TwilioError.authenticatorCriteriaMissing(missing) }
        var settings = try relyingParty(parameter: "config.relying_party")
        settings.attachment = authenticatorAttachment.flatMap(PasskeySettings.Attachment.init(rawValue:))
        settings.residentKey = discoverableCredentials ?? .preferred
        settings.userVerification = userVerification ?? .preferred
        return settings
    }

    private func relyingParty(parameter: String) throws -> PasskeySettings {
        guard let rpID, let rpName, let origins else {
            throw TwilioError.invalidParameter(parameter, "the relying party's id, name and origins are required")
        }
        let settings = PasskeySettings(
            rpID: rpID, rpName: rpName,
            origins: origins.map { $0.contains(":") ? $0 : "https://" + $0 })
        do {
            return try settings.validated()
        } catch {
            throw TwilioError.invalidParameter(parameter, error.description)
        }
    }

    private static func attachment(_ value: String, _ parameter: String) throws -> String? {
        guard !value.isEmpty else { return nil }
        guard attachments.contains(value) else {
            throw TwilioError.invalidParameter(parameter, "platform, cross-platform or any")
        }
        return value
    }

    private static func requirement(_ value: String, _ parameter: String) throws -> PasskeySettings.Requirement? {
        guard !value.isEmpty else { return nil }
        guard let requirement = PasskeySettings.Requirement(rawValue: value) else {
            throw TwilioError.invalidParameter(parameter, "required, preferred or discouraged")
        }
        return requirement
    }

    /// A passkey factor's `config` as twilio-python sends it.
    struct FactorConfig: Decodable, Sendable {
        struct RelyingParty: Decodable, Sendable {
            var id: String?
            var name: String?
            var origins: [String]?
        }

        var relyingParty: RelyingParty?
        var authenticatorAttachment: String?
        var discoverableCredentials: String?
        var userVerification: String?

        enum CodingKeys: String, CodingKey {
            case relyingParty = "relying_party"
            case authenticatorAttachment = "authenticator_attachment"
            case discoverableCredentials = "discoverable_credentials"
            case userVerification = "user_verification"
        }
    }

    /// The config as the service and factor resources show it.
    var json: JSONValue {
        func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return .object([
            "relying_party": .object([
                "id": string(rpID), "name": string(rpName),
                "origins": origins.map { .array($0.map(JSONValue.string)) } ?? .null,
            ]),
            "authenticator_attachment": string(authenticatorAttachment),
            "discoverable_credentials": string(discoverableCredentials?.rawValue),
            "user_verification": string(userVerification?.rawValue),
        ])
    }
}
