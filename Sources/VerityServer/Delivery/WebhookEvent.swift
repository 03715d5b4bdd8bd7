import AsyncHTTPClient
import Crypto
import Foundation
import Logging

/// One event for the project's webhook endpoint (`challenge.approved`, `challenge.denied`, `challenge.expired`).
public struct WebhookEvent: Sendable, Equatable {
    /// The outbox message id, sent as `Verity-Message-Id`.
    public var id: String
    public var url: String
    public var secret: String
    /// The JSON event document; for ``Format/twilio``, a JSON object of the event's parameters.
    public var body: String
    public var format = Format.verity

    public enum Format: Sendable, Equatable {
        /// Verity's JSON event, signed in `Verity-Signature`.
        case verity
        /// A Twilio Verify Push event: the parameters form-encoded, signed in `X-Twilio-Signature`.
        case twilio
    }

    public init(id: String, url: String, secret: String, body: String, format: Format = .verity) {
        self.id = id
        self.url = url
        self.secret = secret
        self.body = body
        self.format = format
    }
}
