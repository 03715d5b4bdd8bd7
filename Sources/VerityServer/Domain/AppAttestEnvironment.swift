import Foundation

/// Which App Attest environment a project's app attests its keys in (``ProjectSettings/appAttestEnvironment``): the
/// app's `com.apple.developer.devicecheck.appattest-environment` entitlement. Apple marks each key's environment in
/// its attestation (the `aaguid`), so a key made by a development build is refused by a production project.
public enum AppAttestEnvironment: String, Sendable, Codable, CaseIterable {
    /// Keys of development builds (Xcode, ad hoc): aaguid `appattestdevelop`.
    case development
    /// Keys of App Store and TestFlight builds: aaguid `appattest` and seven zero bytes.
    case production

    /// The 16-byte `aaguid` Apple writes in the attested authenticator data of a key of this environment.
    var aaguid: [UInt8] {
        switch self {
        case .development: Array("appattestdevelop".utf8)
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        }
    }
}
