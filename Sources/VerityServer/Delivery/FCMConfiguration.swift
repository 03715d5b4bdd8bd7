import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// How to reach Firebase Cloud Messaging's HTTP v1 API with a Google service account.
public struct FCMConfiguration: Sendable, CustomStringConvertible {
    /// The service account's JSON key file, as downloaded from the Google Cloud console: `project_id`,
    /// `client_email`, `private_key` (a PEM RSA key), `private_key_id` and `token_uri` are used. Never logged.
    public var serviceAccountJSON: String
    /// The FCM API origin, without a trailing path; a local stand-in in tests.
    public var baseURL: String
    /// How long one request (to the token endpoint or to FCM), response included, may take before it counts as a
    /// transient failure.
    public var timeout: Duration

    /// Creates a configuration.
    public init(
        serviceAccountJSON: String,
        baseURL: String = "https://fcm.googleapis.com",
        timeout: Duration = .seconds(15)
    ) {
        self.serviceAccountJSON = serviceAccountJSON
        self.baseURL = baseURL
        self.timeout = timeout
    }

    /// Checks that the service account JSON has the fields FCM needs and a usable RSA key, so a server can refuse to
    /// start with a configuration that would fail every notification.
    ///
    /// - Throws: A permanent ``DeliveryError`` naming the problem (never quoting the key).
    public func validate() throws {
        _ = try FCMServiceAccount(json: serviceAccountJSON)
    }

    /// Describes the configuration with the service account's key redacted.
    public var description: String {
        let account = try? FCMServiceAccount(json: serviceAccountJSON)
        return "FCMConfiguration(projectID: \(account?.projectID ?? "invalid"), "
            + "clientEmail: \(account?.clientEmail ?? "invalid"), serviceAccountJSON: <redacted>, "
            + "baseURL: \(baseURL), timeout: \(timeout))"
    }
}
