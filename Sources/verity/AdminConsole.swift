import ArgumentParser
import Foundation
import VerityServer

/// `verity admin operator`: the people who may sign in to the web console.
struct OperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator", abstract: "Create and list console operators.", subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a console operator; sign in with `verity admin console-login NAME`.")
        @Argument(help: "The operator's name (letters, digits, '.', '_', '-', '@').") var name: String
        @Flag(help: "Also ask for a code from an authenticator app at sign-in (its otpauth:// URI is shown once).")
        var totp = false
        @OptionGroup var storage: StorageOptions

        func run() async throws {
            let (created, uri) = try await withVerity(storage, creating: true) {
                try await $0.operators.create(name: name, withTOTP: totp)
            }
            print("Operator \(created.name) (\(created.id)) created.")
            if let uri {
                print("\nAdd this to an authenticator app now (it is shown only this once):\n\(uri)")
            }
            print("\nSign in with: verity admin console-login \(created.name)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List console operators.")
        @OptionGroup var storage: StorageOptions

        func run() async throws {
            for consoleOperator in try await withVerity(storage, { try await $0.operators.list() }) {
                let totp = consoleOperator.hasTOTP ? "TOTP" : "link only"
                print("\(consoleOperator.id)  \(consoleOperator.name)  \(totp)")
            }
        }
    }
}
