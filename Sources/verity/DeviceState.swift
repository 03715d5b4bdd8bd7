import ArgumentParser
import Foundation
import VerityCore
import VerityKit

/// Where the simulated phone keeps its state; shared by every `verity device` command.
struct DeviceStateOptions: ParsableArguments {
    static let defaultDirectory = "verity-device"

    @Option(
        help: ArgumentHelp(
            """
            Directory for the device key, factor record and server URL \
            (env: VERITY_DEVICE_STATE_DIR; default ./\(Self.defaultDirectory)).
            """,
            valueName: "dir"))
    var stateDir: String?

    @Flag(help: "Log VerityKit's requests and answers to standard error (never tokens or keys).")
    var verbose = false

    /// The state directory from the flag, then the environment, then the default.
    var directory: URL {
        let path =
            stateDir ?? ProcessInfo.processInfo.environment["VERITY_DEVICE_STATE_DIR"] ?? "./\(Self.defaultDirectory)"
        return URL(fileURLWithPath: path).standardizedFileURL
    }
}

/// What the CLI remembers next to VerityKit's encrypted store: which server, and which factor this device is.
///
/// VerityKit keeps the key and the factor record sealed in the same directory; this file holds nothing secret, but is
/// still written with mode 0600.
struct DeviceState: Codable {
    static let fileName = "device.json"

    var server: URL
    var factorId: String

    static func fileURL(in directory: URL) -> URL {
        directory.appendingPathComponent(fileName)
    }

    /// The state in `directory`, or `nil` when nothing is enrolled there.
    static func load(from directory: URL) throws -> DeviceState? {
        let file = fileURL(in: directory)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            return try JSONDecoder().decode(DeviceState.self, from: Data(contentsOf: file))
        } catch {
            throw DeviceCommandError(
                code: "storage", message: "\(file.path) is damaged; delete the directory to start over.")
        }
    }

    func save(in directory: URL) throws {
        let file = Self.fileURL(in: directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try encoder.encode(self).write(to: file, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        } catch {
            throw DeviceCommandError(code: "storage", message: "\(file.path) could not be written.")
        }
    }

    static func remove(from directory: URL) throws {
        let file = fileURL(in: directory)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        do {
            try FileManager.default.removeItem(at: file)
        } catch {
            throw DeviceCommandError(code: "storage", message: "\(file.path) could not be deleted.")
        }
    }
}

/// A one-line error: the stable code (the server's, or VerityKit's kind) and what went wrong.
struct DeviceCommandError: LocalizedError {
    var code: String?
    var message: String

    var errorDescription: String? {
        code.map { "\($0): \(message)" } ?? message
    }

    /// Keeps the stable code of a VerityKit error in front of its message.
    init(_ error: VerityKitError) {
        switch error {
        case .server(let problem):
            self.init(code: problem.code, message: problem.detail ?? problem.title)
        case .network(let message):
            self.init(code: error.code, message: "The Verity server could not be reached: \(message)")
        case .mapping(let message), .storage(let message), .input(let message), .keyStorage(let message),
            .initialization(let message), .authenticationToken(let message):
            self.init(code: error.code, message: message)
        case .userVerification(let result):
            self.init(
                code: error.code,
                message: "The owner's verification gave `\(result.rawValue)`, so nothing was approved (try --uv).")
        }
    }

    init(code: String?, message: String) {
        self.code = code
        self.message = message
    }
}

/// The simulated phone: VerityKit's ``VerityPush`` over an encrypted store in the state directory.
struct SimulatedPhone {
    let directory: URL
    let push: VerityPush

    /// - Parameter userVerification: What the simulated biometric prompt answers: `--uv` makes the owner verify by
    ///   face; without it the phone has no one to ask, so the prompt is `unavailable`.
    init(
        directory: URL, server: URL, verbose: Bool, userVerification: UserVerificationOutcome = .unavailable
    ) {
        self.directory = directory
        self.push = VerityPush(
            configuration: VerityConfiguration(baseURL: server),
            store: EncryptedFileSecureStore(directory: directory),
            logger: verbose ? .standardError(minimumLevel: .debug) : .disabled,
            // The point of the simulated phone is that its key lives in the state directory; its user-verification
            // key too, which only a simulator may do.
            allowsSecureEnclave: false,
            userVerifier: ScriptedUserVerifier(fallback: userVerification),
            allowsSoftwareUserVerificationKeysForTesting: true)
    }
}

/// Runs `body` with the enrolled phone and its state, turning VerityKit's errors into one-line messages.
func withEnrolledPhone<T>(
    _ options: DeviceStateOptions, userVerification: UserVerificationOutcome = .unavailable,
    _ body: (SimulatedPhone, DeviceState) async throws -> T
) async throws -> T {
    let directory = options.directory
    guard let state = try DeviceState.load(from: directory) else {
        throw DeviceCommandError(
            code: nil,
            message: """
                No device is enrolled in \(directory.path); run \
                `verity device enroll --server URL --token TOKEN` first.
                """)
    }
    let phone = SimulatedPhone(
        directory: directory, server: state.server, verbose: options.verbose, userVerification: userVerification)
    return try await withDeviceErrors { try await body(phone, state) }
}

/// Runs `body`, rethrowing a ``VerityKitError`` as a ``DeviceCommandError`` that prints its stable code.
func withDeviceErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as VerityKitError {
        throw DeviceCommandError(error)
    }
}
