import ArgumentParser
import Logging
import VerityCore
import VerityServer

@main
struct VerityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verity",
        abstract: "Verity: self-hosted phone, email and device verification.",
        discussion: """
            Start a server with `verity serve`, create a project with `verity admin project create --name NAME`, \
            read what the console senders "sent" with `verity outbox list`, and try push approval with a simulated \
            phone: `verity device enroll`.
            """,
        version: VerityRelease.version,
        subcommands: [Serve.self, Admin.self, Outbox.self, Device.self])

    static func main() async {
        do {
            try LogFormat.fromEnvironment().bootstrap()
        } catch {
            LogFormat.text.bootstrap()
            exit(withError: error)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
