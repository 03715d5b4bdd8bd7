import ArgumentParser
import Foundation
import VerityCore
import VerityServer

struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage projects, API keys, users and roles, and back up the database (works while the server runs).",
        subcommands: [
            ProjectCommand.self, KeyCommand.self, SigningKeysCommand.self, UserCommand.self, RoleCommand.self,
            TwilioCommand.self, OperatorCommand.self, ConsoleLoginCommand.self, BackupCommand.self,
        ])
}

extension Project {
    var summary: String {
        let countries = settings.allowedCountries.map { $0.joined(separator: ",") } ?? "all"
        let carrier = settings.carrierCheck
        let passkeys = settings.passkeys.map {
            "\($0.rpID) (\($0.rpName)), origins \($0.origins.joined(separator: ",")), user verification "
                + "\($0.userVerification.rawValue), resident key \($0.residentKey.rawValue), attestation "
                + "\($0.attestation.rawValue), challenges \($0.challengeLifetime) s, Apple apps "
                + "\($0.appleAppIDs?.joined(separator: ",") ?? "none"), Android apps "
                + "\($0.androidPackages?.joined(separator: ",") ?? "none")"
        }
        return """
            \(id)  \(name)
              code length: \(settings.codeLength) digits, lifetime: \(settings.codeLifetime) s, SMS countries: \(countries)
              session token: \(settings.sessionLifetime) s, refresh token: \(settings.refreshLifetime) s (sliding)
              possession check: \(settings.possessionLifetime) s, its code or link: \(settings.possessionCodeLifetime) s
              app verification before sending codes: \(settings.requiresAppVerification ? "required" : "off")
              App Attest: \(settings.appAttestAppId.map { "\($0), \(settings.appAttestEnvironment.rawValue)" } ?? "off")
              channels: \(Channel.allCases.filter(settings.sends(by:)).map(\.rawValue).joined(separator: ",")), \
            fallback: \(settings.fallbackChannel?.rawValue ?? "none")
              on "this wasn't me": \(settings.unusualActivityResponse.rawValue)
              Descope face tokens as DS/DSR cookies: \(settings.descopeCookies ? "on" : "off")
              Descope project id: \(settings.descopeProjectId ?? "none (the Verity project id only)")
              Firebase emulator admin (Bearer owner, pending codes; loopback only): \(settings.firebaseEmulatorAdmin.rawValue)
              carrier check (CAMARA): \(carrier.enabled ? "on, \(carrier.apiURL), client \(carrier.clientId), \(carrier.numberFormat.rawValue) number, \(carrier.timeout) s" : "off")
              passkeys: \(passkeys ?? "off")
            """
    }
}
