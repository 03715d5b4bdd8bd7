import ArgumentParser
import Foundation
import VerityServer

/// `verity admin console-login NAME`: a one-time link that signs the operator in to the web console.
struct ConsoleLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console-login",
        abstract: "Print a one-time link that signs an operator in to the web console (it works for 10 minutes).")
    @Argument(help: "The operator's name.") var name: String
    @Option(help: "The server's address as the browser reaches it (default: VERITY_PUBLIC_URL, or http://host:port).")
    var url: String?
    @OptionGroup var storage: StorageOptions

    func run() async throws {
        var base = try url ?? storage.configuration().resolvedPublicURL
        while base.hasSuffix("/") { base.removeLast() }
        let (token, expiresAt) = try await withVerity(storage) {
            try await $0.operators.signInLink(operatorName: name)
        }
        print("\(base)/console/sign-in?token=\(token)")
        FileHandle.standardError.write(
            Data("Open it before \(expiresAt.formatted(.iso8601)); it works once.\n".utf8))
    }
}
