import Crypto
import Foundation

/// Encrypts secrets the server must read back (TOTP seeds) with AES-GCM under a key derived from the master key.
struct SecretSealer: Sendable {
    private let key: SymmetricKey

    init(masterKey: MasterKey) {
        key = masterKey.derived(for: "sealed-secrets")
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
}
