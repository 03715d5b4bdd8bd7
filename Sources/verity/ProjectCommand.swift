import ArgumentParser
import Foundation
import VerityCore
import VerityServer

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

        @Option(help: "The project's name, 1 to 100 characters on one line: \"Your Acme verification code is …\".")
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
        @Option(help: "A new name, 1 to 100 characters on one line.") var name: String?
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
