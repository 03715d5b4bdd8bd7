import ArgumentParser
import Foundation
import VerityCore
import VerityServer

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
