import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOSSL
import VerityCore

/// How to reach the Apple Push Notification service (APNs) with token-based provider authentication.
public struct APNsConfiguration: Sendable, CustomStringConvertible {
    /// Which APNs servers to use: a device token belongs to one of them (apps built for development get sandbox
    /// tokens).
    public enum Environment: String, Sendable, CaseIterable {
        /// `https://api.push.apple.com`, for App Store, TestFlight and ad-hoc builds.
        case production
        /// `https://api.sandbox.push.apple.com`, for development builds.
        case sandbox

        /// The origin of the environment's HTTP/2 API.
        public var baseURL: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .sandbox: "https://api.sandbox.push.apple.com"
            }
        }
    }

    /// The 10-character Team ID of the Apple developer account: the `iss` claim of the provider token.
    public var teamID: String
    /// The 10-character Key ID of the APNs authentication key: the `kid` header of the provider token.
    public var keyID: String
    /// The APNs authentication key: the contents of the `.p8` file (a PKCS#8 PEM P-256 private key). Never logged.
    public var privateKeyPEM: String
    /// The default `apns-topic`, the app's bundle ID; a notification's `appId` overrides it.
    public var topic: String
    /// Production or sandbox.
    public var environment: Environment
    /// Overrides the origin chosen by ``environment`` (a local stand-in in tests).
    public var baseURL: String?
    /// Whether the server's certificate is verified. Turn it off only to reach a local stand-in.
    public var certificateVerification: Bool
    /// How long one request, response included, may take before it counts as a transient failure.
    public var timeout: Duration

    /// Creates a configuration.
    public init(
        teamID: String,
        keyID: String,
        privateKeyPEM: String,
        topic: String,
        environment: Environment = .production,
        baseURL: String? = nil,
        certificateVerification: Bool = true,
        timeout: Duration = .seconds(15)
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
        self.topic = topic
        self.environment = environment
        self.baseURL = baseURL
        self.certificateVerification = certificateVerification
        self.timeout = timeout
    }

    /// The origin requests go to: ``baseURL`` when set, otherwise the ``environment``'s, without a trailing slash.
    public var resolvedBaseURL: String {
        resolvedBaseURL(for: nil)
    }

    /// The origin requests for a device token of `deviceEnvironment` go to: ``baseURL`` when set, else that
    /// environment's servers, else ``environment``'s.
    ///
    /// - Parameter deviceEnvironment: The environment the device reported at enrollment, or `nil`.
    /// - Returns: The origin, without a trailing slash.
    public func resolvedBaseURL(for deviceEnvironment: APNsEnvironment?) -> String {
        let chosen = deviceEnvironment.map { Environment(rawValue: $0.rawValue) ?? environment } ?? environment
        return ProviderHTTP.trimmed(baseURL ?? chosen.baseURL)
    }

    /// Checks that the IDs are present and the key is a P-256 private key, so a server can refuse to start with a
    /// configuration that would fail every notification.
    ///
    /// - Throws: A permanent ``DeliveryError`` naming the problem (never quoting the key).
    public func validate() throws {
        _ = try signingKey()
    }

    /// The parsed signing key, after checking the IDs.
    func signingKey() throws(DeliveryError) -> P256.Signing.PrivateKey {
        guard !teamID.isEmpty, !keyID.isEmpty else {
            throw DeliveryError(.permanent, "apns needs a team ID and a key ID")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw DeliveryError(.permanent, "apns private key is not a PEM P-256 private key")
        }
    }

    /// Describes the configuration with the private key redacted.
    public var description: String {
        "APNsConfiguration(teamID: \(teamID), keyID: \(keyID), privateKeyPEM: <redacted>, topic: \(topic), "
            + "environment: \(environment.rawValue), baseURL: \(resolvedBaseURL), "
            + "certificateVerification: \(certificateVerification), timeout: \(timeout))"
    }
}
