import ArgumentParser
import Foundation
import VerityCore
import VerityServer

struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Create, list and revoke a project's secret API keys.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a secret API key (shown once).")
        @Option(help: "A label to tell keys apart, 1 to 100 characters on one line.") var name = "default"
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
