import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore

/// How to reach Twilio's Programmable Messaging API.
///
/// One of ``from`` and ``messagingServiceSID`` is required; when both are set, both are sent, and Twilio sends from
/// ``from`` with the Messaging Service's settings.
public struct TwilioConfiguration: Sendable, CustomStringConvertible {
    /// The account SID (`AC…`): the user name of HTTP Basic auth, and part of the request path.
    public var accountSID: String
    /// The account's auth token: the password of HTTP Basic auth. Never logged.
    public var authToken: String
    /// The sender: an E.164 number or an alphanumeric sender ID, sent as `From`.
    public var from: String?
    /// A Messaging Service (`MG…`) that picks the sender, sent as `MessagingServiceSid`.
    public var messagingServiceSID: String?
    /// The API origin, without a trailing path; a local stand-in in tests.
    public var baseURL: String
    /// How long one request, response body included, may take before it counts as a transient failure.
    public var timeout: Duration
    /// Where Twilio posts the message's or call's status changes (`StatusCallback`): Verity's
    /// `/v1/delivery-status/twilio` when a public URL is configured, so a late failure reaches the fallback channel.
    public var statusCallbackURL: String?

    /// Creates a configuration.
    public init(
        accountSID: String,
        authToken: String,
        from: String? = nil,
        messagingServiceSID: String? = nil,
        baseURL: String = "https://api.twilio.com",
        timeout: Duration = .seconds(15)
    ) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.messagingServiceSID = messagingServiceSID
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// Describes the configuration with the auth token redacted.
    public var description: String {
        "TwilioConfiguration(accountSID: \(accountSID), authToken: <redacted>, from: \(from ?? "nil"), "
            + "messagingServiceSID: \(messagingServiceSID ?? "nil"), baseURL: \(baseURL), timeout: \(timeout), "
            + "statusCallbackURL: \(statusCallbackURL ?? "nil"))"
    }
}
