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
        return """
            \(id)  \(name)
              code length: \(settings.codeLength) digits, lifetime: \(settings.codeLifetime) s, SMS countries: \(countries)
              session token: \(settings.sessionLifetime) s, refresh token: \(settings.refreshLifetime) s (sliding)
              possession check: \(settings.possessionLifetime) s, its code or link: \(settings.possessionCodeLifetime) s
              app verification before sending codes: \(settings.requiresAppVerification ? "required" : "off")
              channels: \(Channel.allCases.filter(settings.sends(by:)).map(\.rawValue).joined(separator: ",")), \
            fallback: \(settings.fallbackChannel?.rawValue ?? "none")
              on "this wasn't me": \(settings.unusualActivityResponse.rawValue)
              Descope face tokens as DS/DSR cookies: \(settings.descopeCookies ? "on" : "off")
              Descope project id: \(settings.descopeProjectId ?? "none (the Verity project id only)")
              Firebase emulator admin (Bearer owner, pending codes; loopback only): \(settings.firebaseEmulatorAdmin.rawValue)
            """
    }
}

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

    /// The options given, by the setting they change.
    private var text: [ProjectSettingsChange.Setting: String] {
        let given: [(ProjectSettingsChange.Setting, String?)] = [
            (.codeLength, codeLength), (.codeLifetime, codeLifetime), (.allowedCountries, allowedCountries),
            (.sessionLifetime, sessionLifetime), (.refreshLifetime, refreshLifetime),
            (.possessionLifetime, possessionLifetime), (.possessionCodeLifetime, possessionCodeLifetime),
            (.requiresAppVerification, requireAppVerification), (.disabledChannels, disabledChannels),
            (.fallbackChannel, fallbackChannel), (.unusualActivityResponse, unusualActivityResponse),
            (.descopeCookies, descopeCookies), (.descopeProjectId, descopeProjectId),
            (.firebaseEmulatorAdmin, firebaseEmulatorAdmin),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { setting, value in value.map { (setting, $0) } })
    }

    func validate() throws {
        do { _ = try ProjectSettingsChange(text) } catch { throw ValidationError(error.description) }
    }

    /// The change the options ask for; validate() has refused any that does not parse.
    func change() throws -> ProjectSettingsChange {
        try ProjectSettingsChange(text)
    }
}

struct ProjectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "project", abstract: "Create, list, show and update projects.",
        subcommands: [
            Create.self, List.self, Show.self, Update.self, Webhook.self, TestNumberCommand.self,
            Firebase.self,
        ])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a project and its first secret API key (the key is shown once).")

        @Option(help: "The project's name; it appears in messages (\"Your Acme verification code is …\").")
        var name: String

        @OptionGroup var settings: ProjectSettingsOptions
        @OptionGroup var storage: StorageOptions

        @Flag(help: "Print JSON.")
        var json = false

        struct Output: Encodable {
            var project: Project
            var apiKey: String
            var apiKeyId: String
        }

        func run() async throws {
            var projectSettings = ProjectSettings()
            try settings.change().apply(to: &projectSettings)
            let (project, key) = try await withVerity(storage, creating: true) { verity in
                try await verity.admin.createProject(name: name, settings: projectSettings)
            }
            if json {
                return try printJSON(Output(project: project, apiKey: key.secret, apiKeyId: key.key.id))
            }
            print(
                """
                Project: \(project.id)  (\(project.name))
                API key: \(key.secret)

                Keep the key secret: it is shown only this once. Use it as `Authorization: Bearer <key>`.
                """)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List projects.")
        @OptionGroup var storage: StorageOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let projects = try await withVerity(storage) { try await $0.admin.listProjects() }
            if json { return try printJSON(projects) }
            if projects.isEmpty { print("No projects yet. Create one with: verity admin project create --name NAME") }
            for project in projects { print(project.summary) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one project.")
        @Argument(help: "The project id (prj_…).") var id: String
        @OptionGroup var storage: StorageOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (project, firebase) = try await withVerity(storage) { verity in
                (try await verity.admin.project(id: id), try await verity.firebaseProjects.link(projectId: id))
            }
            if json { return try printJSON(project) }
            print(project.summary)
            if let firebase {
                print("  Firebase project id: \(firebase.firebaseProjectId), API key: \(firebase.apiKey)")
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update", abstract: "Change a project's name or settings.")
        @Argument(help: "The project id (prj_…).") var id: String
        @Option(help: "A new name.") var name: String?
        @OptionGroup var settings: ProjectSettingsOptions
        @OptionGroup var storage: StorageOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let change = try settings.change()
            let project = try await withVerity(storage) { verity in
                try await verity.admin.updateProject(id: id, name: name, settings: change.apply(to:))
            }
            if json { return try printJSON(project) }
            print(project.summary)
        }
    }
}

extension ProjectCommand {
    struct Webhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webhook",
            abstract: "Send challenge events (challenge.approved|denied|expired) to a URL, signed with a secret.",
            discussion: """
                Each event is a JSON POST with `Verity-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "t.body">`
                under the printed secret. Run with --off to stop sending events.
                """)
        @Argument(help: "The project id (prj_…).") var id: String
        @Option(help: "The endpoint URL (http:// or https://, at most 2048 bytes).") var url: String?
        @Flag(help: "Stop sending events.") var off = false
        @Flag(help: "Make a new signing secret (the old one stops working).") var rotateSecret = false
        @OptionGroup var storage: StorageOptions

        func validate() throws {
            guard (url != nil) != off else { throw ValidationError("Give either --url or --off.") }
        }

        func run() async throws {
            let project = try await withVerity(storage) { verity in
                try await verity.admin.setWebhook(projectId: id, url: off ? nil : url, rotateSecret: rotateSecret)
            }
            guard let url = project.webhookURL, let secret = project.webhookSecret else {
                return print("Webhook events are off for \(project.id).")
            }
            print("Events for \(project.id) go to \(url)\nSigning secret: \(secret)")
        }
    }
}

extension ProjectCommand {
    struct Firebase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "firebase",
            abstract: "Name the project for the Firebase face and print the API key its apps send.",
            discussion: """
                Apps on Firebase phone auth call `Auth.auth().useEmulator(withHost:port:)` with this server's host and
                port, and keep their GoogleService-Info.plist with the printed project id and API key. The ID tokens
                the face issues name the Firebase project id as audience. Run again to see the names, or with
                --firebase-project-id to change the id (the key stays).
                """)
        @Argument(help: "The project id (prj_…).") var id: String
        @Option(
            help:
                "The Firebase project id: 4 to 30 lowercase letters, digits and hyphens (default: derived from the project id)."
        )
        var firebaseProjectId: String?
        @Flag(help: "Print JSON.") var json = false
        @OptionGroup var storage: StorageOptions

        func run() async throws {
            let link = try await withVerity(storage) { verity in
                try await verity.firebaseProjects.name(projectId: id, firebaseProjectId: firebaseProjectId)
            }
            if json {
                return try printJSON([
                    "projectId": link.projectId, "firebaseProjectId": link.firebaseProjectId, "apiKey": link.apiKey,
                ])
            }
            print("Firebase project id: \(link.firebaseProjectId)\nAPI key: \(link.apiKey)")
        }
    }
}

/// `verity admin signing-keys rotate`: the session signing keys (the JWKS), not the API keys of `verity admin key`.
struct SigningKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signing-keys", abstract: "Rotate a project's session signing keys (the keys of its JWKS).",
        subcommands: [Rotate.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Add a new session signing key; the old one signs for two more minutes, then retires.",
            discussion: """
                The new key is in the project's JWKS at once (so verifiers learn it before they meet it) and
                starts signing two minutes later. A retired key stays in the JWKS for 25 hours, longer than
                any token it signed lives (sessions last at most 24 hours).
                """)
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            let id = project.id
            let key = try await withVerity(project.storage) { verity in
                _ = try await verity.admin.project(id: id)
                return try await verity.signingKeys.rotate(projectId: id)
            }
            print(
                "New signing key \(key.kid ?? "") for \(id): in the JWKS now; it signs once the current key retires "
                    + "(in 2 minutes), or at once if it is the project's first.")
        }
    }
}

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Create, list and revoke a project's secret API keys.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a secret API key (shown once).")
        @Option(help: "A label to tell keys apart.") var name = "default"
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let created = try await withVerity(project.storage) {
                try await $0.admin.createKey(projectId: project.id, name: name)
            }
            if json { return try printJSON(created) }
            print("API key \(created.key.id): \(created.secret)\n\nKeep it secret: it is shown only this once.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List a project's keys (never their secrets).")
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let keys = try await withVerity(project.storage) { try await $0.admin.listKeys(projectId: project.id) }
            if json { return try printJSON(keys) }
            for key in keys {
                let state = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print("\(key.id)  \(key.prefix)…  \(key.name)  \(state)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a key: it stops working at once.")
        @Argument(help: "The key id (key_…).") var id: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await withVerity(project.storage) { try await $0.admin.revokeKey(id: id, projectId: project.id) }
            print("Revoked \(id).")
        }
    }
}
