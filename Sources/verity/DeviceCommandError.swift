import ArgumentParser
import Foundation
import VerityCore
import VerityKit

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
