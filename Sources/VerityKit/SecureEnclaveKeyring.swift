import Crypto
import Foundation

/// The factor keys that live in the Secure Enclave: generated there as P-256 keys, kept as Keychain key items named by
/// an application tag, and used only to sign.
///
/// A user-verification key carries `.userPresence` access control, so each signature needs the owner; signing with
/// the `LAContext` the owner just verified with (`AuthenticationContext`) uses that verification instead of asking
/// again.
struct SecureEnclaveKeyring: Sendable {
    /// The store's service, set as each key's label so a move between access groups finds them.
    let service: String
    let accessGroup: String?
    let calls: KeychainCalls

    /// Generates a key in the Secure Enclave under `tag`.
    ///
    /// - Returns: The public key.
    func createKey(tag: String, requiringUserPresence: Bool) throws -> P256.Signing.PublicKey {
        var query = keyQuery(tag: tag)
        query.isInSecureEnclave = true
        // Usable after the first unlock, so a notification extension can answer while the phone is locked, and never
        // moved to another device (a Secure Enclave key cannot be).
        query.privateKeyAccessControl = KeychainQuery.AccessControl(
            accessibility: .afterFirstUnlockThisDeviceOnly,
            flags: requiringUserPresence ? [.privateKeyUsage, .userPresence] : [.privateKeyUsage])
        switch calls.createRandomKey(query) {
        case .success(let key): return try publicKey(of: key)
        case .failure(let status):
            throw VerityKitError.keyStorage("The Secure Enclave could not create a key (OSStatus \(status.code)).")
        }
    }

    /// The public key of the key under `tag`.
    func publicKey(tag: String) throws -> P256.Signing.PublicKey {
        try publicKey(of: try find(tag: tag, authentication: nil))
    }

    /// Signs `data` with the key under `tag`, as ES256 (the raw `r ‖ s` signature).
    ///
    /// - Parameter authentication: The owner's verification to use, for a user-verification key.
    /// - Throws: ``VerityKitError/userVerification(_:)`` when the system's prompt was cancelled or failed,
    ///   ``VerityKitError/keyStorage(_:)`` otherwise.
    func sign(_ data: Data, tag: String, authentication: AuthenticationContext?) throws -> Data {
        let key = try find(tag: tag, authentication: authentication)
        switch calls.sign(key, data) {
        case .success(let der):
            do {
                return try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation
            } catch {
                throw VerityKitError.keyStorage("The Secure Enclave returned a malformed signature.")
            }
        case .failure(let status): throw Self.failure(status, "Signing with the Secure Enclave key failed")
        }
    }

    /// Deletes the key under `tag`; does nothing when there is none.
    func deleteKey(tag: String) throws {
        let status = calls.delete(keyQuery(tag: tag))
        guard status == .success || status == .itemNotFound else {
            throw VerityKitError.keyStorage("The Secure Enclave key could not be deleted (OSStatus \(status.code)).")
        }
    }

    /// Every key of ``service``, in ``accessGroup``.
    var everyKeyQuery: KeychainQuery {
        var query = KeychainQuery()
        query.itemClass = .key
        query.label = service
        query.accessGroup = accessGroup
        query.usesDataProtectionKeychain = true
        return query
    }

    private func keyQuery(tag: String) -> KeychainQuery {
        var query = everyKeyQuery
        query.applicationTag = Data(tag.utf8)
        query.isP256Key = true
        return query
    }

    private func find(tag: String, authentication: AuthenticationContext?) throws -> KeychainKey {
        var query = keyQuery(tag: tag)
        query.returnsReference = true
        query.matchesOne = true
        query.authenticationContext = authentication
        switch calls.copyKey(query) {
        case .success(let key): return key
        case .failure(.itemNotFound): throw VerityKitError.keyStorage("The device key is missing.")
        case .failure(let status): throw Self.failure(status, "The Secure Enclave key could not be read")
        }
    }

    private func publicKey(of key: KeychainKey) throws -> P256.Signing.PublicKey {
        guard let x963 = calls.publicKey(key), let publicKey = try? P256.Signing.PublicKey(x963Representation: x963)
        else { throw VerityKitError.keyStorage("The Secure Enclave key has no usable public key.") }
        return publicKey
    }

    /// A cancelled or failed prompt is the owner's answer, not a storage failure.
    private static func failure(_ status: KeychainStatus, _ message: String) -> VerityKitError {
        switch status {
        case .userCanceled: .userVerification(.cancelled)
        case .authFailed: .userVerification(.failed)
        default: .keyStorage("\(message) (OSStatus \(status.code)).")
        }
    }
}
