import Foundation
import NIOCore

/// A configuration the server cannot start with; the message says what to fix.
public struct ConfigurationError: Error, CustomStringConvertible, LocalizedError {
    public let description: String
    public init(_ description: String) { self.description = description }
    public var errorDescription: String? { description }
}

extension ConfigurationError {
    /// Creates a directory only its owner can use (0700), with its parents, or says why it cannot.
    static func createPrivateDirectory(_ path: String, what: String) throws(ConfigurationError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            // Foundation's own words are vague ("The file doesn't exist."); the system's say which part failed.
            let reason =
                ((error as NSError).userInfo[NSUnderlyingErrorKey] as? POSIXError).map {
                    String(cString: strerror($0.code.rawValue))
                } ?? error.localizedDescription
            throw ConfigurationError("Cannot create \(what) \(path): \(reason).")
        }
    }
}

extension ConfigurationError {
    /// Why the server could not listen on `host:port`, said as what to change; nil for any other error.
    public init?(listeningFailure error: any Error, host: String, port: Int) {
        switch error {
        case let error as IOError where error.errnoCode == EADDRINUSE:
            self.init(
                "\(host):\(port) is already in use: stop what listens there, or choose another port with --port "
                    + "(VERITY_PORT).")
        case let error as IOError where error.errnoCode == EACCES:
            self.init(
                "Not allowed to listen on \(host):\(port) (ports below 1024 need privileges): choose another port with "
                    + "--port (VERITY_PORT).")
        case let error as IOError where error.errnoCode == EADDRNOTAVAIL:
            self.init("\(host) is not an address of this machine: choose another with --host (VERITY_HOST).")
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            self.init("The host \(host) does not resolve: choose an address of this machine with --host (VERITY_HOST).")
        default:
            return nil
        }
    }
}
