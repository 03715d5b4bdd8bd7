import ArgumentParser
import Foundation
import VerityCore
import VerityServer

/// `verity admin user …`: a project's users, straight in the database (works while the server runs).
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Create, list, show, update, disable, enable and delete a project's users.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Disable.self, Enable.self, Delete.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a user with an email address, a phone number, or both.")
        @Option(help: "The user's email address (a login id).") var email: String?
        @Option(help: "The user's phone number in E.164 form, e.g. +14155550100 (a login id).") var phone: String?
        @Option(help: "A name to show.") var name: String?
        @Option(help: "Custom session claims as a JSON object, e.g. '{\"plan\":\"pro\"}' (at most 4 KiB).")
        var claims: String?
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard email != nil || phone != nil else { throw ValidationError("Give --email, --phone or both.") }
        }

        func run() async throws {
            let request = CreateUserRequest(
                loginIds: [email, phone].compactMap { $0 }, displayName: name, customClaims: try parseClaims(claims))
            let user = try await withUsers(project) { users, project in
                try await users.create(request, in: project)
            }
            try show(user, json: json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List a project's users, newest first, or find the one holding a login id.")
        @Option(help: "Only the user with this email address or phone number (emails match regardless of case).")
        var loginId: String?
        @Option(help: "Users per page, 1 to 100.") var limit = 50
        @Option(help: "Continue after a previous page (the cursor it printed).") var cursor: String?
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let page = try await withUsers(project) { users, project in
                try await users.list(loginId: loginId, limit: limit, cursor: cursor, in: project)
            }
            if json { return try printJSON(page) }
            if page.items.isEmpty { print(loginId == nil ? "No users yet." : "No user has that login id.") }
            for user in page.items { print(user.summary) }
            if let next = page.nextCursor { print("More: --cursor \(next)") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one user.")
        @Argument(help: "The user id (usr_…).") var id: String
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let user = try await withUsers(project) { try await $0.user(id: id, in: $1) }
            try show(user, json: json)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Change a user's name, claims or login ids; what you leave out stays as it is.")
        @Argument(help: "The user id (usr_…).") var id: String
        @Option(help: "A new email address; an empty string removes it.") var email: String?
        @Option(help: "A new E.164 phone number; an empty string removes it.") var phone: String?
        @Option(help: "A new name to show; an empty string removes it.") var name: String?
        @Option(help: "Replaces the custom claims with this JSON object ('{}' removes them).") var claims: String?
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let customClaims = try parseClaims(claims)
            let user = try await withUsers(project) { users, project in
                var loginIds: [String]?
                if email != nil || phone != nil {
                    // Replace only the kind given: the other login id stays.
                    let current = try await users.user(id: id, in: project).loginIds
                    let currentEmail = current.first { $0.contains("@") }
                    let currentPhone = current.first { !$0.contains("@") }
                    loginIds = [email ?? currentEmail, phone ?? currentPhone].compactMap { $0 }.filter { !$0.isEmpty }
                }
                return try await users.update(
                    id: id, UpdateUserRequest(displayName: name, customClaims: customClaims, loginIds: loginIds),
                    in: project)
            }
            try show(user, json: json)
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "disable", abstract: "Disable a user: it can no longer sign in.")
        @Argument(help: "The user id (usr_…).") var id: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await setDisabled(true, id: id, project)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enable", abstract: "Enable a disabled user again.")
        @Argument(help: "The user id (usr_…).") var id: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await setDisabled(false, id: id, project)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete a user; its login ids become free for another user.")
        @Argument(help: "The user id (usr_…).") var id: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await withUsers(project) { try await $0.delete(id: id, in: $1) }
            print("Deleted \(id).")
        }
    }
}

extension User {
    var summary: String {
        let name = displayName.map { "  \($0)" } ?? ""
        let state = disabled ? "  (disabled)" : ""
        let roles = roles.isEmpty ? "" : "  roles: \(roles.joined(separator: ","))"
        return "\(id)  \(loginIds.joined(separator: ", "))\(name)\(roles)\(state)"
    }
}

/// Disables the user `id` (which ends its sessions) or enables it again, and says which.
private func setDisabled(_ disabled: Bool, id: String, _ options: ProjectOptions) async throws {
    _ = try await withProject(options) { try await $0.accounts.setDisabled(disabled, id: id, in: $1) }
    print("\(disabled ? "Disabled" : "Enabled") \(id).")
}

/// Opens the node, finds the project and runs `body` with the user service; errors come out readable.
private func withUsers<T>(_ options: ProjectOptions, _ body: (UserService, Project) async throws -> T) async throws -> T
{
    try await withProject(options) { verity, project in try await body(verity.users, project) }
}

/// Opens the node, finds the project and runs `body`; refusals come out as `code: detail`.
func withProject<T>(_ options: ProjectOptions, _ body: (Verity, Project) async throws -> T) async throws -> T {
    do {
        return try await withVerity(options.storage) { verity in
            try await body(verity, try await verity.admin.project(id: options.id))
        }
    } catch let error as VerityError {
        throw UserCommandError(description: "\(error.code.rawValue): \(error.detail ?? error.code.title)")
    }
}

private func parseClaims(_ text: String?) throws -> [String: JSONValue]? {
    guard let text else { return nil }
    do {
        return try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
    } catch {
        throw ValidationError("--claims must be a JSON object, e.g. '{\"plan\":\"pro\"}'.")
    }
}

func show(_ user: User, json: Bool) throws {
    if json { return try printJSON(user) }
    print(user.summary)
    if !user.customClaims.isEmpty {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print("  claims: \(String(decoding: try encoder.encode(user.customClaims), as: UTF8.self))")
    }
    print("  created \(user.createdAt.formatted(.iso8601))")
    print("  last sign-in \(user.lastSignInAt?.formatted(.iso8601) ?? "never")")
}
