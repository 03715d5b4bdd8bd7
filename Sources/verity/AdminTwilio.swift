import ArgumentParser
import Foundation
import VerityServer

/// `verity admin twilio`: the Twilio credentials a project answers to on the Twilio Verify face.
struct TwilioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "twilio",
        abstract: "Show the Twilio account SID and API key SIDs of a project, for Twilio Verify clients.",
        discussion: """
            Twilio clients authenticate with the account SID (or an API key SID) as the user name and one of the
            project's API keys (vk_…) as the auth token (or API key secret). Nothing new is stored: the SIDs are
            derived from the project and key ids.

            Verify Push webhook events are signed as Twilio signs them (X-Twilio-Signature), keyed by the project's
            webhook signing secret (whsec_…, shown here): give it to Twilio's RequestValidator in place of the auth
            token.
            """)

    @OptionGroup var project: ProjectOptions
    @Flag(help: "Print JSON.") var json = false

    struct Output: Encodable {
        struct Key: Encodable {
            var keyId: String
            var apiKeySid: String
            var name: String
        }

        var accountSid: String
        var apiKeys: [Key]
        /// Signs the Twilio face's webhook events; nil until the project has one.
        var webhookSigningSecret: String?
    }

    func run() async throws {
        let (found, keys) = try await withVerity(project.storage) { verity in
            let found = try await verity.admin.project(id: project.id)
            return (found, try await verity.admin.listKeys(projectId: project.id).filter { $0.revokedAt == nil })
        }
        guard let accountSid = TwilioSID.account(forProject: project.id) else {
            throw ValidationError("\(project.id) has no Twilio account SID.")
        }
        let output = Output(
            accountSid: accountSid,
            apiKeys: keys.compactMap { key in
                TwilioSID.apiKey(forKey: key.id).map { Output.Key(keyId: key.id, apiKeySid: $0, name: key.name) }
            }, webhookSigningSecret: found.webhookSecret)
        if json { return try printJSON(output) }
        print("Account SID: \(accountSid)  (auth token: any of the project's API keys, vk_…)")
        for key in output.apiKeys {
            print("API key SID: \(key.apiKeySid)  for \(key.keyId) (\(key.name)); its secret is that key's vk_…")
        }
        if let secret = output.webhookSigningSecret {
            print("Webhook signing secret: \(secret)  (RequestValidator's key for X-Twilio-Signature)")
        }
    }
}
