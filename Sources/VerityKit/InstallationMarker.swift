import Foundation

/// Remembers that VerityKit already ran in this installation of the app, to tell a reinstall from a restart.
///
/// It must live somewhere that is removed with the app, unlike the Keychain. See
/// ``VerityConfiguration/clearStorageOnReinstall``.
public protocol InstallationMarker: Sendable {
    /// Whether ``setPresent()`` was called in this installation.
    var isPresent: Bool { get }
    /// Records that VerityKit ran in this installation.
    func setPresent()
}
