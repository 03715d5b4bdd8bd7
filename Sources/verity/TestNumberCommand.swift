import ArgumentParser
import Foundation
import VerityCore
import VerityServer

/// `verity admin project test-number …`: fixed-code phone numbers for app review and automated tests.
struct TestNumberCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-number", abstract: "Add, list and remove test phone numbers (for testing only).",
        discussion: """
            Sign-in codes to a test number are never sent, its fixed code always works, and no rate limit applies:
            use them for app-store review and automated tests, never for real people. At most 10 per project.
            """,
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a test number with its fixed code (or change the code of one).")
        @Argument(help: "The phone number in E.164 form, e.g. +16505551234.") var phoneNumber: String
        @Argument(help: "Its fixed code: 4 to 10 digits.") var code: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            let number = try await withProject(project) { verity, project in
                try await verity.testNumbers.add(
                    CreateTestPhoneNumberRequest(phoneNumber: phoneNumber, code: code), in: project)
            }
            print("Test number \(number.phoneNumber): code \(number.code). Nothing is ever sent to it.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a project's test numbers.")
        @OptionGroup var project: ProjectOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let numbers = try await withProject(project) { verity, project in
                try await verity.testNumbers.list(in: project)
            }
            if json { return try printJSON(numbers) }
            if numbers.isEmpty { print("No test numbers.") }
            for number in numbers { print("\(number.phoneNumber)  code \(number.code)") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Make a test number an ordinary number again.")
        @Argument(help: "The phone number.") var phoneNumber: String
        @OptionGroup var project: ProjectOptions

        func run() async throws {
            try await withProject(project) { verity, project in
                try await verity.testNumbers.remove(phoneNumber, in: project)
            }
            print("Removed test number \(phoneNumber).")
        }
    }
}
