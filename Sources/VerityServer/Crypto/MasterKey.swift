import Crypto
import Foundation

/// The server's root secret. Code derivation and (later) key encryption use keys derived from it.
///
/// Loaded from `VERITY_MASTER_KEY` (base64, 32 bytes) when set — every node of a fleet must share it — or from
/// `master.key` in the data directory, created with mode 0600 on first start.
public struct MasterKey: Sendable {
    let key: SymmetricKey

    public init(bytes: [UInt8]) throws(ConfigurationError) {
        guard bytes.count == 32 else {
            throw ConfigurationError("The master key must be 32 bytes (44 characters of base64).")
        }
        key = SymmetricKey(data: bytes)
    }

    /// Parses the base64 form used in the key file and the environment.
    public init(base64: String) throws(ConfigurationError) {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ConfigurationError("The master key is not valid base64.")
        }
        try self.init(bytes: Array(data))
    }

    /// A subkey for one purpose; different purposes never share key material.
    func derived(for purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Data("verity:\(purpose)".utf8), outputByteCount: 32)
    }

    /// Reads the key file, creating it (0600) when missing.
    public static func loadOrCreate(at path: String, random: any RandomSource = SystemRandomSource()) throws
        -> MasterKey
    {
        let manager = FileManager.default
        if let existing = manager.contents(atPath: path) {
            guard let text = String(data: existing, encoding: .utf8) else {
                throw ConfigurationError("The master key file \(path) is not text.")
            }
            return try MasterKey(base64: text)
        }
        let bytes = random.bytes(count: 32)
        let created = manager.createFile(
            atPath: path, contents: Data((Data(bytes).base64EncodedString() + "\n").utf8),
            attributes: [.posixPermissions: 0o600])
        guard created else {
            throw ConfigurationError("Cannot create the master key file \(path).")
        }
        return try MasterKey(bytes: bytes)
    }
}
