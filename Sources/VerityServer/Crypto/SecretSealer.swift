import Crypto
import Foundation

/// Encrypts secrets the server must read back (TOTP seeds, signing keys, webhook signing secrets, test numbers'
/// codes) with AES-GCM under a key derived from the master key, one derivation per use.
struct SecretSealer: Sendable {
    /// Marks a sealed text column value (``sealText(_:context:)``), so that a column can hold, and be upgraded from,
    /// values written in plain text before they were sealed. Base64 never contains `:`, nor does any plain value
    /// such a column held (`whsec_…`, digits).
    static let textPrefix = "sealed:v1:"

    private let key: SymmetricKey

    /// - Parameter purpose: The key derivation label; each kind of sealed value has its own, so a value of one kind
    ///   never opens as another. TOTP seeds and signing keys share the original `sealed-secrets`.
    init(masterKey: MasterKey, purpose: String = "sealed-secrets") {
        key = masterKey.derived(for: purpose)
    }

    /// base64 of nonce ‖ ciphertext ‖ tag; `context` (e.g. the factor id) is authenticated, so a sealed value
    /// copied to another row does not open.
    func seal(_ secret: [UInt8], context: String) throws -> String {
        let box = try AES.GCM.seal(secret, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw StoreError.corruptValue(column: "sealed secret") }
        return combined.base64EncodedString()
    }

    func open(_ sealed: String, context: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: sealed) else { throw StoreError.corruptValue(column: "sealed secret") }
        return Array(
            try AES.GCM.open(AES.GCM.SealedBox(combined: data), using: key, authenticating: Data(context.utf8)))
    }

    /// A text secret as a column stores it: ``textPrefix`` and the sealed UTF-8.
    func sealText(_ text: String, context: String) throws -> String {
        Self.textPrefix + (try seal(Array(text.utf8), context: context))
    }

    /// The text of a column value; a value stored before sealing (no ``textPrefix``) is returned as it is.
    func openText(_ stored: String, context: String) throws -> String {
        guard Self.isSealed(stored) else { return stored }
        return String(
            decoding: try open(String(stored.dropFirst(Self.textPrefix.count)), context: context), as: UTF8.self)
    }

    static func isSealed(_ stored: String) -> Bool {
        stored.hasPrefix(textPrefix)
    }
}
