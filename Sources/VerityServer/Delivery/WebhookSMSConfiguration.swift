import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// Where a customer's own SMS gateway takes messages, and the secret that signs them.
public struct WebhookSMSConfiguration: Sendable, CustomStringConvertible {
    /// The gateway's URL; each message is one `POST` to it.
    public var url: String
    /// The secret shared with the gateway, used for the `Verity-Signature` header. Never logged.
    public var secret: String
    /// How long one request, response body included, may take before it counts as a transient failure.
    public var timeout: Duration

    /// Creates a configuration.
    public init(url: String, secret: String, timeout: Duration = .seconds(15)) {
        self.url = url
        self.secret = secret
        self.timeout = timeout
    }

    /// Describes the configuration with the URL and the secret redacted (a URL may carry a token too).
    public var description: String {
        "WebhookSMSConfiguration(url: <redacted>, secret: <redacted>, timeout: \(timeout))"
    }
}
