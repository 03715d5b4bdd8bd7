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

/// An `OSStatus` of the Keychain, or the code of a `SecKey` error.
struct KeychainStatus: Error, Sendable, Equatable {
    var code: Int32

    /// `errSecSuccess`.
    static let success = KeychainStatus(code: 0)
    /// `errSecItemNotFound`.
    static let itemNotFound = KeychainStatus(code: -25300)
    /// `errSecDuplicateItem`.
    static let duplicateItem = KeychainStatus(code: -25299)
    /// `errSecUserCanceled`, and `LAError.userCancel`, `.systemCancel` and `.appCancel` when signing.
    static let userCanceled = KeychainStatus(code: -128)
    /// `errSecAuthFailed`, and `LAError.authenticationFailed` when signing.
    static let authFailed = KeychainStatus(code: -25293)
}

/// A `SecKey` held by VerityKit between finding it and signing with it.
// @unchecked Sendable: the reference is an immutable `SecKey`, which Security allows to be used from any thread.
struct KeychainKey: @unchecked Sendable {
    var reference: AnyObject
}

/// The evaluated `LAContext` a ``UserVerifier`` hands to the key that signs next, so that the owner is asked once.
// @unchecked Sendable: the context is created by one verification and then only read, by one signing at a time.
final class AuthenticationContext: @unchecked Sendable, Equatable {
    let context: AnyObject

    init(_ context: AnyObject) {
        self.context = context
    }

    static func == (lhs: AuthenticationContext, rhs: AuthenticationContext) -> Bool {
        lhs === rhs
    }
}

/// The Keychain and key functions VerityKit calls, as a table: `SecItemAdd` and friends on Apple platforms, a recording
/// double in tests.
struct KeychainCalls: Sendable {
    /// `SecItemAdd`.
    var add: @Sendable (KeychainQuery) -> KeychainStatus
    /// `SecItemCopyMatching` returning data.
    var copyData: @Sendable (KeychainQuery) -> Result<Data, KeychainStatus>
    /// `SecItemUpdate`: the items matching the first query get the second's attributes.
    var update: @Sendable (KeychainQuery, KeychainQuery) -> KeychainStatus
    /// `SecItemDelete`.
    var delete: @Sendable (KeychainQuery) -> KeychainStatus
    /// `SecKeyCreateRandomKey`.
    var createRandomKey: @Sendable (KeychainQuery) -> Result<KeychainKey, KeychainStatus>
    /// `SecItemCopyMatching` returning a key reference.
    var copyKey: @Sendable (KeychainQuery) -> Result<KeychainKey, KeychainStatus>
    /// `SecKeyCopyPublicKey` and `SecKeyCopyExternalRepresentation`: the public key in X9.63 form.
    var publicKey: @Sendable (KeychainKey) -> Data?
    /// `SecKeyCreateSignature` with `ecdsaSignatureMessageX962SHA256`: a DER signature.
    var sign: @Sendable (KeychainKey, Data) -> Result<Data, KeychainStatus>
    /// Whether the device has a Secure Enclave (`SecureEnclave.isAvailable`).
    var hasSecureEnclave: Bool
}
