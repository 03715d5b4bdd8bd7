import Crypto
import Foundation
import VerityCore

#if canImport(CryptoKit)
    import CryptoKit
    import Security
#endif

/// A device key held by a ``FactorKeyStore``: how to find it, and its public half.
public struct FactorKeyHandle: Sendable {
    /// The key's name in the store.
    public var reference: String
    /// The public key, registered with the server.
    public var publicKey: P256.Signing.PublicKey
    /// Whether the private key lives in the Secure Enclave.
    public var isHardwareBacked: Bool
    /// Whether using the key needs the owner: a user-verification key (see `FactorKeyType`).
    public var requiresUserVerification = false
}

/// Creates the P-256 keys that identify this device to Verity, one per factor, and signs with them.
///
/// A key is generated in the Secure Enclave when there is one; what gets stored is then its `dataRepresentation`, a
/// handle only that enclave can use. Elsewhere it is a software key, whose raw private scalar is stored. Either way it
/// is kept in the ``SecureStore`` and used only through this type: private keys are never returned.
public struct FactorKeyStore: Sendable {
    private static let itemPrefix = "verity.key."

    private let store: any SecureStore
    private let allowsSecureEnclave: Bool

    /// Creates a key store.
    ///
    /// - Parameters:
    ///   - store: Where keys are kept.
    ///   - allowsSecureEnclave: Whether new keys may go into the Secure Enclave (ignored where there is none).
    public init(store: any SecureStore, allowsSecureEnclave: Bool = true) {
        self.store = store
        self.allowsSecureEnclave = allowsSecureEnclave
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
    /// A user-verification key is, in the Secure Enclave, created with `userPresence` access control, so the system
    /// asks for Face ID, Touch ID or the passcode before it signs. Where there is no enclave it is a software key
    /// marked as such: this store then signs with it only when the caller says the owner verified (see
    /// ``signChallengeAnswer(_:keyID:reference:userVerified:)``), which is what tests and the simulator rely on.
    ///
    /// - Parameter requiringUserVerification: Whether the key is a user-verification key.
    /// - Returns: The new key's handle.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key cannot be generated or stored.
    public func createKey(requiringUserVerification: Bool) throws -> FactorKeyHandle {
        let key = try SigningKey.generate(
            allowsSecureEnclave: allowsSecureEnclave, userPresence: requiringUserVerification)
        let reference = "key_\(UUID().uuidString.lowercased())"
        var record = key.stored
        record.requiresUserVerification = requiringUserVerification ? true : nil
        let stored: Data
        do {
            stored = try JSONEncoder().encode(record)
        } catch {
            throw VerityKitError.keyStorage("A new key could not be encoded.")
        }
        do {
            try store.set(stored, forKey: Self.itemPrefix + reference)
        } catch {
            throw VerityKitError.keyStorage("A new key could not be stored: \(error.localizedDescription)")
        }
        return FactorKeyHandle(
            reference: reference, publicKey: key.publicKey, isHardwareBacked: key.isHardwareBacked,
            requiresUserVerification: requiringUserVerification)
    }

    /// The public key of a stored key.
    ///
    /// - Parameter reference: The key's ``FactorKeyHandle/reference``.
    /// - Returns: The public key.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing or unreadable.
    public func publicKey(reference: String) throws -> P256.Signing.PublicKey {
        try load(reference).publicKey
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
        let key = try load(reference)
        do {
            return try key.compactJWS(payload: payload, keyID: keyID, type: type)
        } catch {
            throw VerityKitError.keyStorage("Signing with the device key failed.")
        }
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
    ///     key signs only then; a Secure Enclave one asks the system, which prompts when it must.
    /// - Returns: The compact JWS with `typ` `ChallengeSigningPayload.tokenType`.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the key is missing, needs a verification that did not happen,
    ///   or signing fails.
    public func signChallengeAnswer(
        _ answer: ChallengeSigningPayload, keyID: String, reference: String, userVerified: Bool
    ) throws -> String {
        let (key, requiresUserVerification) = try loadRecord(reference)
        if requiresUserVerification, !userVerified, !key.isHardwareBacked {
            throw VerityKitError.keyStorage("The user-verification key signs only after the owner verified.")
        }
        do {
            return try key.sign(answer, keyID: keyID)
        } catch {
            throw VerityKitError.keyStorage("Signing the challenge answer failed.")
        }
    }

    /// Deletes a stored key; does nothing when there is none.
    ///
    /// - Parameter reference: The key's ``FactorKeyHandle/reference``.
    /// - Throws: ``VerityKitError/keyStorage(_:)`` when the store fails.
    public func deleteKey(reference: String) throws {
        do {
            try store.removeData(forKey: Self.itemPrefix + reference)
        } catch {
            throw VerityKitError.keyStorage("The key could not be deleted: \(error.localizedDescription)")
        }
    }

    private func load(_ reference: String) throws -> SigningKey {
        try loadRecord(reference).key
    }

    private func loadRecord(_ reference: String) throws -> (key: SigningKey, requiresUserVerification: Bool) {
        let data: Data?
        do {
            data = try store.data(forKey: Self.itemPrefix + reference)
        } catch {
            throw VerityKitError.keyStorage("The device key could not be read: \(error.localizedDescription)")
        }
        guard let data else { throw VerityKitError.keyStorage("The device key is missing.") }
        let stored: StoredKey
        do {
            stored = try JSONDecoder().decode(StoredKey.self, from: data)
        } catch {
            throw VerityKitError.keyStorage("The stored device key is damaged.")
        }
        return (try SigningKey(stored), stored.requiresUserVerification ?? false)
    }
}

/// A key as kept in the store.
private struct StoredKey: Codable {
    enum Kind: String, Codable {
        case software
        case secureEnclave
    }

    var kind: Kind
    /// The raw private scalar (software) or the enclave's opaque handle (Secure Enclave).
    var data: Data
    /// Set for a user-verification key.
    var requiresUserVerification: Bool?
}

/// A usable private key.
private enum SigningKey {
    case software(P256.Signing.PrivateKey)
    #if canImport(CryptoKit)
        case secureEnclave(SecureEnclave.P256.Signing.PrivateKey)
    #endif

    static func generate(allowsSecureEnclave: Bool, userPresence: Bool = false) throws -> SigningKey {
        #if canImport(CryptoKit)
            if allowsSecureEnclave && SecureEnclave.isAvailable {
                // Usable after the first unlock, so a notification extension can answer while the phone is locked; a
                // user-verification key also needs Face ID, Touch ID or the passcode for each use.
                var error: Unmanaged<CFError>?
                let flags: SecAccessControlCreateFlags =
                    userPresence ? [.privateKeyUsage, .userPresence] : .privateKeyUsage
                guard
                    let access = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, flags, &error)
                else {
                    throw VerityKitError.keyStorage("The Secure Enclave access control could not be created.")
                }
                do {
                    return .secureEnclave(try SecureEnclave.P256.Signing.PrivateKey(accessControl: access))
                } catch {
                    throw VerityKitError.keyStorage("The Secure Enclave could not create a key.")
                }
            }
        #endif
        return .software(P256.Signing.PrivateKey())
    }

    init(_ stored: StoredKey) throws {
        switch stored.kind {
        case .software:
            do {
                self = .software(try P256.Signing.PrivateKey(rawRepresentation: stored.data))
            } catch {
                throw VerityKitError.keyStorage("The stored device key is damaged.")
            }
        case .secureEnclave:
            #if canImport(CryptoKit)
                do {
                    self = .secureEnclave(try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: stored.data))
                } catch {
                    throw VerityKitError.keyStorage("The Secure Enclave cannot use the stored device key.")
                }
            #else
                throw VerityKitError.keyStorage("The stored device key needs a Secure Enclave.")
            #endif
        }
    }

    var stored: StoredKey {
        switch self {
        case .software(let key): return StoredKey(kind: .software, data: key.rawRepresentation)
        #if canImport(CryptoKit)
            case .secureEnclave(let key): return StoredKey(kind: .secureEnclave, data: key.dataRepresentation)
        #endif
        }
    }

    var publicKey: P256.Signing.PublicKey {
        switch self {
        case .software(let key): return key.publicKey
        #if canImport(CryptoKit)
            case .secureEnclave(let key): return key.publicKey
        #endif
        }
    }

    var isHardwareBacked: Bool {
        switch self {
        case .software: return false
        #if canImport(CryptoKit)
            case .secureEnclave: return true
        #endif
        }
    }

    func compactJWS(payload: [UInt8], keyID: String, type: String?) throws -> String {
        switch self {
        case .software(let key):
            return try CompactJWS.sign(payload: payload, keyID: keyID, type: type, using: key)
        #if canImport(CryptoKit)
            case .secureEnclave(let key):
                return try Self.enclaveJWS(payload: payload, keyID: keyID, type: type, key: key)
        #endif
        }
    }

    func sign(_ answer: ChallengeSigningPayload, keyID: String) throws -> String {
        switch self {
        case .software(let key):
            return try answer.sign(using: key, keyID: keyID)
        #if canImport(CryptoKit)
            case .secureEnclave(let key):
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                let payload = Array(try encoder.encode(answer))
                return try Self.enclaveJWS(
                    payload: payload, keyID: keyID, type: ChallengeSigningPayload.tokenType, key: key)
        #endif
        }
    }

    #if canImport(CryptoKit)
        /// ``CompactJWS/sign(payload:keyID:type:contentType:using:)`` for a key it cannot take: the same header (sorted
        /// keys, no `cty`), signed inside the enclave.
        private static func enclaveJWS(
            payload: [UInt8], keyID: String, type: String?, key: SecureEnclave.P256.Signing.PrivateKey
        ) throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let header = try encoder.encode(JWSHeader(alg: CompactJWS.algorithm, typ: type, kid: keyID))
            let signingInput = "\(Base64URL.encode(header)).\(Base64URL.encode(payload))"
            let signature = try key.signature(for: Data(signingInput.utf8))
            return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
        }
    #endif
}
