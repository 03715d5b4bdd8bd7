import ArgumentParser
import Foundation
import VerityCore
import VerityServer

/// `verity admin role …`: a project's roles and who holds them.
struct RoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role",
        abstract: "Create, list, change and delete roles; give them to users and take them away.",
        discussion: "A user's roles and their permissions appear in the user's next session token (after a refresh).",
        subcommands: [Create.self, List.self, Update.self, Delete.self, Assign.self, Remove.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a role with its permissions.")
        @Argument(help: "The role's name: letters, digits and _ . : - (e.g. editor).") var name: String
        @Option(name: .customLong("permission"), help: "A permission it grants (repeat the option for more).")
        var permissions: [String] = []
        @Option(help: "What the role is for.") var description: String?
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let role = try await withProject(project) { verity, project in
                try await verity.roles.create(
                    CreateRoleRequest(name: name, description: description, permissions: permissions), in: project)
            }
            try show(role, json: json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a project's roles.")
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let roles = try await withProject(project) { try await $0.roles.list(in: $1) }
            if json { return try printJSON(roles) }
            if roles.isEmpty {
                print("No roles yet. Create one with: verity admin role create NAME --project \(project.id)")
            }
            for role in roles { print(role.summary) }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update", abstract: "Replace a role's permissions or description.")
        @Argument(help: "The role's name.") var name: String
        @Option(name: .customLong("permission"), help: "The permissions it grants from now on (repeat for more).")
        var permissions: [String] = []
        @Flag(help: "Take every permission away.") var noPermissions = false
        @Option(help: "A new description; an empty string removes it.") var description: String?
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let request = UpdateRoleRequest(
                description: description, permissions: noPermissions ? [] : permissions.isEmpty ? nil : permissions)
            let role = try await withProject(project) { verity, project in
                try await verity.roles.update(name: name, request, in: project)
            }
            try show(role, json: json)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete a role and take it from every user.")
        @Argument(help: "The role's name.") var name: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await withProject(project) { try await $0.roles.delete(name: name, in: $1) }
            print("Deleted role \(name).")
        }
    }

    struct Assign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "assign", abstract: "Give roles to a user.")
        @Argument(help: "The user id (usr_…).") var user: String
        @Argument(help: "The roles to give.") var roles: [String]
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let updated = try await withProject(project) { verity, project in
                try await verity.roles.assign(roles, toUser: user, in: project)
            }
            try show(updated, json: json)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take a role from a user.")
        @Argument(help: "The user id (usr_…).") var user: String
        @Argument(help: "The role to take away.") var role: String
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let updated = try await withProject(project) { verity, project in
                try await verity.roles.remove(role, fromUser: user, in: project)
            }
            try show(updated, json: json)
        }
    }
}

extension Role {
    var summary: String {
        let about = description.map { "  (\($0))" } ?? ""
        let grants = permissions.isEmpty ? "no permissions" : permissions.joined(separator: ", ")
        return "\(name)\(about): \(grants)"
    }
}

private func show(_ role: Role, json: Bool) throws {
    if json { return try printJSON(role) }
    print(role.summary)
}
