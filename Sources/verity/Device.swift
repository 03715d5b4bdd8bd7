import ArgumentParser
import Foundation
import VerityCore
import VerityKit

struct Device: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "A simulated phone built on VerityKit: enroll a push factor, list, approve and deny challenges.",
        discussion: """
            The backend mints an enrollment token (POST /v1/enrollment-tokens {"userId": …}); enroll with it \
            once, and later commands find the server and the factor in the state directory. The phone pulls \
            challenges (no push notifications), so run `verity device challenges` after the backend sent one.
            """,
        subcommands: [
            Enroll.self, Status.self, Challenges.self, Approve.self, Deny.self, Update.self, UserVerificationKey.self,
            RotateKey.self, Forget.self,
        ])
}

extension Device {
    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll",
            abstract: "Enroll this simulated phone as a push factor, with an enrollment token from the backend.",
            discussion: """
                Creates a P-256 device key, registers it (push platform `none`), proves possession of it, and \
                keeps the key, the factor record and the server URL in the state directory (mode 0700, files 0600).
                """)

        @Option(help: "The Verity server's base URL, for example http://127.0.0.1:8080.")
        var server: String

        @Option(help: "The enrollment token (vet_…) the backend got from POST /v1/enrollment-tokens.")
        var token: String

        @Option(help: "The name shown in the user's list of devices (default: this host's name).")
        var name: String?

        @Flag(
            help: """
                Also enroll a user-verification key (on a phone: Face ID, Touch ID or passcode), the only key that \
                approves a challenge with `userVerification: required`.
                """)
        var withUv = false

        @OptionGroup var state: DeviceStateOptions

        @Flag(help: "Print JSON.")
        var json = false

        func validate() throws {
            guard serverURL != nil else { throw ValidationError("--server must be an http:// or https:// URL.") }
        }

        private var serverURL: URL? {
            guard let url = URL(string: server), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host?.isEmpty == false
            else { return nil }
            return url
        }

        func run() async throws {
            guard let serverURL else { throw ValidationError("--server must be an http:// or https:// URL.") }
            let directory = state.directory
            if let existing = try DeviceState.load(from: directory) {
                throw DeviceCommandError(
                    code: nil,
                    message: """
                        \(directory.path) already holds factor \(existing.factorId); run `verity device forget` \
                        first, or pass another --state-dir.
                        """)
            }
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DeviceCommandError(code: "storage", message: "\(directory.path) could not be created.")
            }

            let phone = SimulatedPhone(directory: directory, server: serverURL, verbose: state.verbose)
            let friendlyName = name ?? ProcessInfo.processInfo.hostName
            let factor = try await withDeviceErrors {
                do {
                    // Without device.json the directory holds at most what an interrupted enrollment left behind.
                    try await phone.push.clearLocalStorage()
                    let created = try await phone.push.createFactor(
                        enrollmentToken: token, friendlyName: friendlyName, pushPlatform: .none, pushToken: nil,
                        withUserVerification: withUv)
                    let verified = try await phone.push.verifyFactor(created.id)
                    try DeviceState(server: serverURL, factorId: verified.id).save(in: directory)
                    return verified
                } catch {
                    try? await phone.push.clearLocalStorage()
                    throw error
                }
            }

            let summary = DeviceSummary(factor: factor, server: serverURL, directory: directory)
            if json { return try printJSON(summary) }
            print(
                """
                Enrolled \(factor.id) for user \(factor.userId) on \(serverURL.absoluteString).
                The device key is kept in \(directory.path); keep it private.
                """)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show the enrolled factor: id, user, name, server and status, as recorded on this device.")
        @OptionGroup var state: DeviceStateOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let summary = try await withEnrolledPhone(state) { phone, state in
                guard let factor = try await phone.push.factors().first(where: { $0.id == state.factorId }) else {
                    throw DeviceCommandError(
                        code: "storage",
                        message: "The record of \(state.factorId) is missing; run `verity device forget --local-only`.")
                }
                return DeviceSummary(factor: factor, server: state.server, directory: phone.directory)
            }
            if json { return try printJSON(summary) }
            print(summary.text)
        }
    }

    struct Challenges: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "challenges",
            abstract: """
                List the challenges waiting for this device's answer: id, message, details, context, expiry and the \
                steps answering takes.
                """)
        @OptionGroup var state: DeviceStateOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let (challenges, factor) = try await withEnrolledPhone(state) { phone, state in
                let factor = try await phone.push.factors().first { $0.id == state.factorId }
                return (try await phone.push.pendingChallenges(factorId: state.factorId), factor)
            }
            let hasKey = factor?.hasUserVerificationKey ?? false
            if json { return try printJSON(challenges) }
            if challenges.isEmpty { print("No pending challenges for \(factor?.id ?? "this device").") }
            for challenge in challenges {
                let expiry = challenge.expiresAt.formatted(.iso8601)
                let seconds = max(0, Int(challenge.expiresAt.timeIntervalSinceNow.rounded()))
                print("\(challenge.id)  \(challenge.message)  expires \(expiry) (in \(seconds) s)")
                for detail in challenge.details { print("  \(detail.label): \(detail.value)") }
                if let context = challenge.context {
                    for (label, value) in [
                        ("Where", context.location), ("Client", context.client), ("App", context.app),
                    ] {
                        if let value { print("  \(label): \(value)") }
                    }
                    if let time = context.time { print("  When: \(time.formatted(.iso8601))") }
                    for item in context.textItems ?? [] { print("  \(item)") }
                }
                print("  steps: \(Self.steps(for: challenge, hasUserVerificationKey: hasKey))")
            }
        }

        /// The remediation steps VerityKit will take for an approval, in words.
        static func steps(for challenge: DeviceChallenge, hasUserVerificationKey: Bool) -> String {
            let consent = "consent (approve | deny [--not-me])"
            switch (challenge.userVerification, hasUserVerificationKey) {
            case (.required, true):
                return "\(consent) -> user verification, required (approve --uv) -> sign with the UV key"
            case (.required, false):
                return "\(consent) -> message: no user-verification key, cannot approve (deny, or enroll --with-uv)"
            case (.preferred, true):
                return "\(consent) -> user verification, preferred (--uv; else the silent key signs) -> sign"
            case (.preferred, false), (.discouraged, _):
                return "\(consent) -> sign with the silent key"
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract: "Approve a challenge, signed with the device key (or the user-verification key, with --uv).")
        @OptionGroup var challenge: ChallengeAnswerOptions

        @Flag(
            help: """
                Simulate the owner passing the biometric prompt (Face ID), so the user-verification key signs; \
                without it the prompt is unavailable and a `required` challenge is not approved.
                """)
        var uv = false

        func run() async throws {
            try await challenge.answer(.approved, userVerification: uv ? .verified(.face) : .unavailable)
        }
    }

    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "deny",
            abstract: "Deny a challenge, signed with the device key; --not-me reports unusual activity.")
        @OptionGroup var challenge: ChallengeAnswerOptions

        @Flag(
            help: """
                "This wasn't me": sign the reason `not_me` with the denial; the server records a security event, sends \
                its webhook and applies the project's --unusual-activity-response.
                """)
        var notMe = false

        func run() async throws {
            try await challenge.answer(.denied, reason: notMe ? .notMe : nil)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Register a new push token or name with the server, signed with the device key.")
        @Option(help: "The new push token (after the platform rotated it).") var pushToken: String?
        @Option(help: "The new name shown in the user's list of devices.") var name: String?
        @OptionGroup var state: DeviceStateOptions

        func validate() throws {
            guard pushToken != nil || name != nil else { throw ValidationError("Give --push-token or --name.") }
        }

        func run() async throws {
            let factor = try await withEnrolledPhone(state) { phone, state in
                try await phone.push.updateFactor(state.factorId, pushToken: pushToken, friendlyName: name)
            }
            print("Updated \(factor.id): \(factor.friendlyName).")
        }
    }

    struct UserVerificationKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "uv-key",
            abstract:
                "Add (or replace) the user-verification key, or remove it; signed with the device key, and a new key "
                + "with the old one or a fresh enrollment token.")
        @Flag(help: "Remove the key instead of adding one.") var remove = false
        @Option(help: "A fresh enrollment token (vet_…) from the backend: needed to add a first key.")
        var token: String?
        @OptionGroup var state: DeviceStateOptions

        func run() async throws {
            let factor = try await withEnrolledPhone(state) { phone, state in
                remove
                    ? try await phone.push.removeUserVerificationKey(factorId: state.factorId)
                    : try await phone.push.addUserVerificationKey(factorId: state.factorId, enrollmentToken: token)
            }
            print("\(factor.id) \(factor.hasUserVerificationKey ? "has a" : "has no") user-verification key.")
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace the device key with a new one: the old key signs the request, the new one a proof.")
        @OptionGroup var state: DeviceStateOptions

        func run() async throws {
            let factor = try await withEnrolledPhone(state) { phone, state in
                try await phone.push.rotateKey(factorId: state.factorId)
            }
            print("Rotated the device key of \(factor.id).")
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Delete the factor on the server, then the device key and state in the state directory.")
        @Flag(help: "Only delete the local state, without telling the server (when it no longer knows the factor).")
        var localOnly = false
        @OptionGroup var state: DeviceStateOptions

        func run() async throws {
            let (factorId, directory) = try await withEnrolledPhone(state) { phone, state in
                if !localOnly { try await phone.push.deleteFactor(state.factorId) }
                try await phone.push.clearLocalStorage()
                // The state directory is this simulated phone's alone: its store's key file goes too (clearing push
                // state keeps whatever else a store holds, as an app's shared Keychain would).
                try EncryptedFileSecureStore(directory: phone.directory).removeAll()
                try DeviceState.remove(from: phone.directory)
                return (state.factorId, phone.directory)
            }
            if localOnly {
                print("Deleted the device state in \(directory.path); the server still has \(factorId).")
            } else {
                print("Deleted \(factorId) on the server and the device state in \(directory.path).")
            }
        }
    }
}
