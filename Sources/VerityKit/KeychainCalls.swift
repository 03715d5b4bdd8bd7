import Foundation

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
