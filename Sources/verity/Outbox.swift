import ArgumentParser
import Foundation
import VerityServer

struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox", abstract: "Read the message outbox.", subcommands: [List.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "Show messages, newest first, with their full text (for development: it includes codes).")

        @OptionGroup var storage: StorageOptions

        @Option(help: "Only messages to this destination (E.164 number or email address, as stored).")
        var to: String?

        @Option(help: "How many messages to show.")
        var limit = 20

        @Flag(help: "Print JSON.")
        var json = false

        struct Entry: Encodable {
            var id: String
            var channel: String
            var to: String
            var status: String
            var attempts: Int
            var sender: String?
            var lastError: String?
            var createdAt: Date
            var sentAt: Date?
            var subject: String?
            var body: String?
            /// For a call: the text-to-speech voice's language; the body's lines are said with a pause between them.
            var voice: String?
        }

        func run() async throws {
            guard (1...1000).contains(limit) else { throw ValidationError("--limit must be between 1 and 1000.") }
            let entries = try await withVerity(storage) { verity in
                try await verity.outbox.messages(destination: to, limit: limit).map { message, rendered in
                    Entry(
                        id: message.id, channel: message.channel.rawValue, to: message.destination,
                        status: message.status.rawValue, attempts: message.attempts, sender: message.sender,
                        lastError: message.lastError, createdAt: message.createdAt, sentAt: message.sentAt,
                        subject: rendered?.subject, body: rendered?.body, voice: rendered?.speech?.language)
                }
            }
            if json { return try printJSON(entries) }
            if entries.isEmpty { print("The outbox is empty.") }
            for entry in entries {
                print(
                    "\(entry.id)  \(entry.channel)  to \(entry.to)  \(entry.status)  \(entry.createdAt.formatted(.iso8601))"
                )
                if let subject = entry.subject { print("  Subject: \(subject)") }
                if let voice = entry.voice { print("  A call would say, in a \(voice) voice, pausing between lines:") }
                if let body = entry.body {
                    print(
                        body.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(
                            separator: "\n"))
                }
                if let error = entry.lastError { print("  Last error: \(error)") }
                print("")
            }
        }
    }
}
