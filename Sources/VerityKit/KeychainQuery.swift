import Foundation

/// One request to the Keychain, in neutral values: what VerityKit asks of `SecItem…` and `SecKey…`.
///
/// VerityKit builds every query as one of these and hands it to a `KeychainCalls` table. On Apple platforms the
/// table's `system` entries turn it into the attribute dictionary with Security's constants (one `kSec…` key per
/// field, named beside each) and call the framework; tests fill the table with a double that records each query and
/// checks it against the rules Apple documents. So what the Keychain is asked is decided and tested here, and the
/// Apple-only code only spells it.
struct KeychainQuery: Sendable, Equatable {
    /// `kSecClass`.
    enum ItemClass: Sendable, Equatable {
        /// `kSecClassGenericPassword`: a store entry.
        case genericPassword
        /// `kSecClassKey`: a Secure Enclave key.
        case key
    }

    /// `kSecAttrAccessible` (or the protection of an access control).
    enum Accessibility: Sendable, Equatable {
        /// `kSecAttrAccessibleAfterFirstUnlock`: readable after the first unlock, and moved to a new device by an
        /// encrypted backup or a device-to-device migration.
        case afterFirstUnlock
        /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`: readable after the first unlock, never moved.
        case afterFirstUnlockThisDeviceOnly
    }

    /// One flag of `SecAccessControlCreateFlags`.
    enum AccessControlFlag: Sendable, Hashable {
        /// `.privateKeyUsage`: the private key can sign (required for a Secure Enclave key).
        case privateKeyUsage
        /// `.userPresence`: each use needs Face ID, Touch ID, Optic ID or the passcode.
        case userPresence
    }

    /// A `SecAccessControl`: a protection and flags.
    struct AccessControl: Sendable, Equatable {
        var accessibility: Accessibility
        var flags: Set<AccessControlFlag>
    }

    /// `kSecClass`.
    var itemClass: ItemClass?
    /// `kSecAttrService`.
    var service: String?
    /// `kSecAttrAccount`.
    var account: String?
    /// `kSecAttrLabel`: the store's service, on its keys, so they can be found together.
    var label: String?
    /// `kSecAttrAccessGroup`.
    var accessGroup: String?
    /// `kSecAttrApplicationTag`: a key's name.
    var applicationTag: Data?
    /// `kSecAttrAccessible`.
    var accessible: Accessibility?
    /// `kSecValueData`.
    var value: Data?
    /// `kSecAttrKeyType` `kSecAttrKeyTypeECSECPrimeRandom` and `kSecAttrKeySizeInBits` 256: a P-256 key.
    var isP256Key = false
    /// `kSecAttrTokenID` `kSecAttrTokenIDSecureEnclave`: the key is generated in, and never leaves, the Secure Enclave.
    var isInSecureEnclave = false
    /// `kSecPrivateKeyAttrs` with `kSecAttrIsPermanent`, the tag and `kSecAttrAccessControl`: a key generated and kept.
    var privateKeyAccessControl: AccessControl?
    /// `kSecReturnData`.
    var returnsData = false
    /// `kSecReturnRef`.
    var returnsReference = false
    /// `kSecMatchLimit` `kSecMatchLimitOne`.
    var matchesOne = false
    /// `kSecUseDataProtectionKeychain`: on macOS too, the Keychain whose access groups and classes work as on iOS.
    var usesDataProtectionKeychain = false
    /// `kSecUseAuthenticationContext`: the `LAContext` the owner just verified with, so using the key does not prompt
    /// again.
    var authenticationContext: AuthenticationContext?
}
