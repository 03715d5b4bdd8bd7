import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import VerityCore

/// How to reach and authenticate to the mail server that relays verification emails.
public struct SMTPConfiguration: Sendable {
    /// How the connection to the mail server is protected.
    public enum Security: Sendable, Equatable {
        /// Plain text from start to end. Credentials, if any, then travel unencrypted: choose this only on
        /// purpose, e.g. for a relay on localhost.
        case none
        /// Connect in plain text, then upgrade with `STARTTLS` before anything else (usually port 587).
        /// Fails rather than continuing unencrypted when the server does not offer it.
        case startTLS
        /// Implicit TLS from the first byte (usually port 465).
        case tls
    }

    /// The mail server's host name or IP address.
    public var host: String
    /// The mail server's port.
    public var port: Int
    /// The user name for `AUTH PLAIN`; authentication happens only when both it and ``password`` are set.
    public var username: String?
    /// The password for `AUTH PLAIN`. Never logged, never part of an error.
    public var password: String?
    /// The sender: a bare address (`codes@example.com`) or a mailbox with a display name
    /// (`Example <codes@example.com>`).
    public var from: String
    /// How the connection is protected.
    public var security: Security
    /// Whether the server's certificate must chain to a trusted root and match ``host``.
    /// Turn off only for tests or a self-signed relay you control.
    public var certificateVerification: Bool
    /// The longest a whole send (connect, conversation and upload) may take before it fails as transient.
    public var timeout: Duration
    /// The name this client gives in `EHLO`.
    public var heloName: String

    /// Creates a configuration.
    ///
    /// - Parameter port: the server's port; nil picks the usual one for `security`: 465 for `.tls`, else 587.
    public init(
        host: String,
        port: Int? = nil,
        username: String? = nil,
        password: String? = nil,
        from: String,
        security: Security = .startTLS,
        certificateVerification: Bool = true,
        timeout: Duration = .seconds(30),
        heloName: String = "localhost"
    ) {
        self.host = host
        self.port = port ?? (security == .tls ? 465 : 587)
        self.username = username
        self.password = password
        self.from = from
        self.security = security
        self.certificateVerification = certificateVerification
        self.timeout = timeout
        self.heloName = heloName
    }
}

extension SMTPConfiguration: CustomStringConvertible, CustomReflectable {
    /// A summary that leaves the password out, so logging a configuration cannot leak it.
    public var description: String {
        let credentials = username.map { "\($0):<redacted>@" } ?? ""
        return "smtp://\(credentials)\(host):\(port) (\(security), from \(from))"
    }

    /// Keeps the password out of `dump` and debugger output as well.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host, "port": port, "username": username as Any, "password": "<redacted>", "from": from,
                "security": security, "certificateVerification": certificateVerification, "timeout": timeout,
                "heloName": heloName,
            ]
        )
    }
}
