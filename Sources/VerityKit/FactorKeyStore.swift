import Crypto
import Foundation
import VerityCore

/// Creates the P-256 keys that identify this device to Verity, one per factor, and signs with them.
///
/// Where there is a Secure Enclave, a key is generated in it and stays there: a Keychain key item (in the access group
/// of the ``KeychainSecureStore`` given, if it is one), of which the ``SecureStore`` keeps only a record. Elsewhere the
/// silent key is a software key whose raw private scalar is kept in the store, never migrated to another device.
///
/// A user-verification key is always a Secure Enclave key with `userPresence` access control, so the system, not this
/// code, enforces that the owner verified. Without a Secure Enclave one cannot be created, unless a test asks for a
/// software stand-in explicitly (`allowsSoftwareUserVerificationKeysForTesting`).
public struct FactorKeyStore: Sendable {
    private let itemPrefix: String
    private let store: any SecureStore
    private let enclave: SecureEnclaveKeyring?
    private let allowsSoftwareUserVerificationKeys: Bool

    /// Creates a key store.
    ///
    /// - Parameters:
    ///   - store: Where keys (or, for Secure Enclave keys, their records) are kept.
    ///   - allowsSecureEnclave: Whether new keys may go into the Secure Enclave (ignored where there is none).
    ///   - allowsSoftwareUserVerificationKeysForTesting: Whether a user-verification key may be a software key where
    ///     there is no Secure Enclave: for tests and simulators only, since then only this code checks that the owner
    ///     verified.
    public init(
        store: any SecureStore, allowsSecureEnclave: Bool = true,
        allowsSoftwareUserVerificationKeysForTesting: Bool = false
    ) {
        self.init(
            store: store, namespace: VerityPush.defaultStorageNamespace,
            enclave: allowsSecureEnclave ? Self.secureEnclave(for: store) : nil,
            allowsSoftwareUserVerificationKeys: allowsSoftwareUserVerificationKeysForTesting)
    }

    init(
        store: any SecureStore, namespace: String, enclave: SecureEnclaveKeyring?,
        allowsSoftwareUserVerificationKeys: Bool
    ) {
        self.itemPrefix = "\(namespace).key."
        self.store = store
        self.enclave = enclave
        self.allowsSoftwareUserVerificationKeys = allowsSoftwareUserVerificationKeys
    }

    /// The Secure Enclave that goes with `store`: a Keychain store's own calls and access group; on Apple platforms the
    /// app's default group otherwise; `nil` where there is none.
    static func secureEnclave(for store: any SecureStore) -> SecureEnclaveKeyring? {
        if let keychain = store as? KeychainSecureStore {
            return keychain.calls.hasSecureEnclave ? keychain.secureEnclaveKeys : nil
        }
        #if canImport(Security)
            return KeychainCalls.system.hasSecureEnclave
                ? SecureEnclaveKeyring(service: "io.verity.kit", accessGroup: nil, calls: .system) : nil
        #else
            return nil
        #endif
    }

    /// Generates and stores a new key.
    ///
    /// - Returns: The new key's handle.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key cannot be generated or stored.
    public func createKey() throws -> FactorKeyHandle {
        try createKey(requiringUserVerification: false)
    }

    /// Generates and stores a new key, optionally one whose use needs the owner.
    ///
    /// A user-verification key is created in the Secure Enclave with `userPresence` access control, so the system asks
    /// for Face ID, Touch ID, Optic ID or the passcode before it signs (once, when the signature is given the
    /// verification that just happened).
    ///
    /// - Parameter requiringUserVerification: Whether the key is a user-verification key.
    /// - Returns: The new key's handle.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key cannot be generated or stored, and for a
    ///   user-verification key where there is no Secure Enclave.
    public func createKey(requiringUserVerification: Bool) throws -> FactorKeyHandle {
        let reference = "key_\(UUID().uuidString.lowercased())"
        let record: StoredKey
        let publicKey: P256.Signing.PublicKey
        if let enclave {
            publicKey = try enclave.createKey(
                tag: itemPrefix + reference, requiringUserPresence: requiringUserVerification)
            record = StoredKey(kind: .keychain, data: Data())
        } else {
            if requiringUserVerification && !allowsSoftwareUserVerificationKeys {
                throw VerityKitError.keyStorage("A user-verification key needs a Secure Enclave, and there is none.")
            }
            let key = P256.Signing.PrivateKey()
            publicKey = key.publicKey
            record = StoredKey(kind: .software, data: key.rawRepresentation)
        }
        var stored = record
        stored.requiresUserVerification = requiringUserVerification ? true : nil
        do {
            try store.set(try JSONEncoder().encode(stored), forKey: itemPrefix + reference, deviceBound: true)
        } catch {
            if record.kind == .keychain { try? enclave?.deleteKey(tag: itemPrefix + reference) }
            throw VerityKitError.keyStorage("A new key could not be stored: \(error.localizedDescription)")
        }
        return FactorKeyHandle(
            reference: reference, publicKey: publicKey, isHardwareBacked: record.kind == .keychain,
            requiresUserVerification: requiringUserVerification)
    }

    /// The public key of a stored key.
    ///
    /// - Parameter reference: The key's ``FactorKeyHandle/reference``.
    /// - Returns: The public key.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing or unreadable.
    public func publicKey(reference: String) throws -> P256.Signing.PublicKey {
        let record = try loadRecord(reference)
        switch record.kind {
        case .software: return try Self.softwareKey(record).publicKey
        case .keychain: return try requireEnclave().publicKey(tag: itemPrefix + reference)
        case .secureEnclave: throw Self.legacyKey
        }
    }

    /// Signs `payload` as a compact ES256 JWS with the stored key.
    ///
    /// - Parameters:
    ///   - payload: The bytes to sign, usually JSON.
    ///   - keyID: The `kid` header.
    ///   - type: The `typ` header, or `nil` to omit it.
    ///   - reference: The key's ``FactorKeyHandle/reference``.
    /// - Returns: The compact JWS.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing or signing fails.
    public func signJWS(payload: [UInt8], keyID: String, type: String?, reference: String) throws -> String {
        try sign(payload: payload, keyID: keyID, type: type, reference: reference, authentication: nil)
    }

    /// Signs a challenge answer with the stored key (see `ChallengeSigningPayload`).
    ///
    /// - Parameters:
    ///   - answer: The payload to sign.
    ///   - keyID: The `kid` header, the factor's identifier.
    ///   - reference: The key's ``FactorKeyHandle/reference``.
    /// - Returns: The compact JWS with `typ` `ChallengeSigningPayload.tokenType`.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing or signing fails.
    public func signChallengeAnswer(_ answer: ChallengeSigningPayload, keyID: String, reference: String) throws
        -> String
    {
        try signChallengeAnswer(answer, keyID: keyID, reference: reference, userVerified: false)
    }

    /// Signs a challenge answer with the stored key, which may be a user-verification key.
    ///
    /// - Parameters:
    ///   - answer: The payload to sign.
    ///   - keyID: The `kid` header, the factor's identifier.
    ///   - reference: The key's ``FactorKeyHandle/reference``.
    ///   - userVerified: Whether the owner just verified (a ``UserVerifier`` said so). A software user-verification
    ///     key (tests only) signs only then; a Secure Enclave one asks the system, which prompts.
    /// - Returns: The compact JWS with `typ` `ChallengeSigningPayload.tokenType`.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing, needs a verification that did not happen,
    ///   or signing fails; ``VerityKitError/userVerification(_:)`` when the system's prompt is cancelled or fails.
    public func signChallengeAnswer(
        _ answer: ChallengeSigningPayload, keyID: String, reference: String, userVerified: Bool
    ) throws -> String {
        try signChallengeAnswer(
            answer, keyID: keyID, reference: reference,
            verification: userVerified ? OwnerVerification(outcome: .verified(.pin)) : nil)
    }

    /// Signs a challenge answer after `verification`, handing its `LAContext` to a Secure Enclave key so the owner is
    /// not asked twice.
    func signChallengeAnswer(
        _ answer: ChallengeSigningPayload, keyID: String, reference: String, verification: OwnerVerification?
    ) throws -> String {
        let verified: Bool = if case .verified = verification?.outcome { true } else { false }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload: [UInt8]
        do {
            payload = Array(try encoder.encode(answer))
        } catch {
            throw VerityKitError.keyStorage("The challenge answer could not be encoded.")
        }
        return try sign(
            payload: payload, keyID: keyID, type: ChallengeSigningPayload.tokenType, reference: reference,
            authentication: verified ? .verified(verification?.authenticationContext) : nil)
    }

    /// Deletes a stored key; does nothing when there is none.
    ///
    /// - Parameter reference: The key's ``FactorKeyHandle/reference``.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the store fails.
    public func deleteKey(reference: String) throws {
        let record = try? loadRecord(reference)
        if record?.kind == .keychain { try requireEnclave().deleteKey(tag: itemPrefix + reference) }
        do {
            try store.removeData(forKey: itemPrefix + reference)
        } catch {
            throw VerityKitError.keyStorage("The key could not be deleted: \(error.localizedDescription)")
        }
    }

    /// Whether the owner verified before this signature, and with which `LAContext`.
    private enum Authentication {
        case verified(AuthenticationContext?)
    }

    private func sign(
        payload: [UInt8], keyID: String, type: String?, reference: String, authentication: Authentication?
    ) throws -> String {
        let record = try loadRecord(reference)
        switch record.kind {
        case .software:
            if record.requiresUserVerification == true, authentication == nil {
                throw VerityKitError.keyStorage("The user-verification key signs only after the owner verified.")
            }
            do {
                return try CompactJWS.sign(payload: payload, keyID: keyID, type: type, using: Self.softwareKey(record))
            } catch let error as VerityKitError {
                throw error
            } catch {
                throw VerityKitError.keyStorage("Signing with the device key failed.")
            }
        case .keychain:
            let context: AuthenticationContext? =
                if case .verified(let context) = authentication { context } else { nil }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let header: Data
            do {
                header = try encoder.encode(JWSHeader(alg: CompactJWS.algorithm, typ: type, kid: keyID))
            } catch {
                throw VerityKitError.keyStorage("The signature header could not be encoded.")
            }
            let signingInput = "\(Base64URL.encode(header)).\(Base64URL.encode(payload))"
            let signature = try requireEnclave().sign(
                Data(signingInput.utf8), tag: itemPrefix + reference, authentication: context)
            return "\(signingInput).\(Base64URL.encode(signature))"
        case .secureEnclave:
            throw Self.legacyKey
        }
    }

    private func requireEnclave() throws -> SecureEnclaveKeyring {
        guard let enclave else { throw VerityKitError.keyStorage("The stored device key needs a Secure Enclave.") }
        return enclave
    }

    private static let legacyKey = VerityKitError.keyStorage(
        "The device key was created by an earlier VerityKit and cannot be used; enroll the factor again.")

    private static func softwareKey(_ record: StoredKey) throws -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(rawRepresentation: record.data)
        } catch {
            throw VerityKitError.keyStorage("The stored device key is damaged.")
        }
    }

    private func loadRecord(_ reference: String) throws -> StoredKey {
        let data: Data?
        do {
            data = try store.data(forKey: itemPrefix + reference)
        } catch {
            throw VerityKitError.keyStorage("The device key could not be read: \(error.localizedDescription)")
        }
        guard let data else { throw VerityKitError.keyStorage("The device key is missing.") }
        do {
            return try JSONDecoder().decode(StoredKey.self, from: data)
        } catch {
            throw VerityKitError.keyStorage("The stored device key is damaged.")
        }
    }
}

/// A key's record in the store.
private struct StoredKey: Codable {
    enum Kind: String, Codable {
        /// A software key; `data` is its raw private scalar.
        case software
        /// A Secure Enclave key item in the Keychain, tagged with the record's name; `data` is empty.
        case keychain
        /// A CryptoKit Secure Enclave key of VerityKit before 2026-11 (its opaque handle), no longer usable.
        case secureEnclave
    }

    var kind: Kind
    var data: Data
    /// Set for a user-verification key.
    var requiresUserVerification: Bool?
}
