import Foundation

/// Turns on App Attest for ``VerityAppVerification``: it then proves the app with an assertion from an attested key
/// where the device can, and with the silent push where it cannot.
public struct AppAttestOptions: Sendable {
    /// The device's App Attest service.
    public var service: any AppAttestService
    /// Where the attested key's identifier is kept (the Keychain in an app).
    public var store: any SecureStore
    /// Tells a reinstall, after which the key is gone though the Keychain kept its identifier.
    public var installationMarker: any InstallationMarker

    /// Creates the options.
    ///
    /// - Parameters:
    ///   - service: The App Attest service; by default DeviceCheck's on Apple platforms, none elsewhere.
    ///   - store: Where the key's identifier is kept, for example ``KeychainSecureStore``.
    ///   - installationMarker: Tells a reinstall; its own marker by default, apart from the one of ``VerityPush``.
    public init(
        service: any AppAttestService = Self.defaultService, store: any SecureStore,
        installationMarker: any InstallationMarker = UserDefaultsInstallationMarker(
            key: "io.verity.kit.app-attest.installed")
    ) {
        self.service = service
        self.store = store
        self.installationMarker = installationMarker
    }

    /// DeviceCheck's App Attest where the platform has it, otherwise ``UnsupportedAppAttestService``.
    public static var defaultService: any AppAttestService {
        #if canImport(DeviceCheck)
            DeviceCheckAppAttestService()
        #else
            UnsupportedAppAttestService()
        #endif
    }
}
