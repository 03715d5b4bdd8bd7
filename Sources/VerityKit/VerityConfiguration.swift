import Foundation
import VerityCore

/// How an app's ``VerityPush`` and ``VeritySession`` reach its Verity server.
public struct VerityConfiguration: Sendable, Equatable {
    /// The version of VerityKit (VerityCore's `VerityRelease.version`), sent to the server when a factor is enrolled.
    public static let sdkVersion = VerityRelease.version

    /// The server's base URL, for example `https://verify.example.com`; API paths are appended to it.
    public var baseURL: URL
    /// The app's identifier (its bundle identifier, say), recorded with each factor so the server can pick push
    /// credentials; `nil` when the server has only one app.
    public var appId: String?
    /// Whether to wipe VerityKit's secure store the first time it runs after the app was (re)installed.
    ///
    /// The Keychain outlives an app's removal, so without this a reinstalled app finds the keys and factor records
    /// of its previous installation. A reinstall is detected with an ``InstallationMarker``, by default one in
    /// `UserDefaults`, which is removed with the app.
    public var clearStorageOnReinstall: Bool
    /// The APNs environment of this build's device tokens, sent with each `apns` factor so the server pushes to the
    /// right servers: `.sandbox` for a development build, `.production` for App Store and TestFlight builds; `nil`
    /// for the server's configured environment.
    public var apnsEnvironment: APNsEnvironment?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - baseURL: The server's base URL (`https`, or `http` for local development).
    ///   - appId: The app's identifier, or `nil`.
    ///   - clearStorageOnReinstall: Whether to wipe stored keys and factors after a reinstall.
    public init(baseURL: URL, appId: String? = nil, clearStorageOnReinstall: Bool = false) {
        self.baseURL = baseURL
        self.appId = appId
        self.clearStorageOnReinstall = clearStorageOnReinstall
    }
}

extension VerityConfiguration {
    /// Checks that ``baseURL`` is an absolute `http` or `https` URL with a host, before the first request.
    ///
    /// - Throws: ``VerityKitError/initialization(_:)`` when it is not.
    func validateBaseURL() throws {
        let components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)
        guard let scheme = components?.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components?.host, !host.isEmpty
        else {
            throw VerityKitError.initialization("The base URL must be an absolute http or https URL.")
        }
    }
}
