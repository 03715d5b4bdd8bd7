import ArgumentParser
import Foundation
import VerityCore
import VerityKit

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
