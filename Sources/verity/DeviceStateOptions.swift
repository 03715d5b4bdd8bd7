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
