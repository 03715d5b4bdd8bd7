import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's root secret: code and link derivation and the sealing of stored secrets (TOTP seeds, signing keys,
/// webhook signing secrets, test-number codes) each use their own key derived from it.
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
    ///
    /// Like ssh with a private key, a key file that the group or others may read or write is refused: anyone who
    /// read it can open every sealed secret and compute every code.
    public static func loadOrCreate(at path: String, random: any RandomSource = SystemRandomSource()) throws
        -> MasterKey
    {
        if FileManager.default.fileExists(atPath: path) { return try load(at: path) }
        let bytes = random.bytes(count: 32)
        // Created with its final mode in the same call, so it is never readable by others, not even for a moment.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            // Another process made it first: use theirs.
            if errno == EEXIST { return try load(at: path) }
            throw ConfigurationError("Cannot create the master key file \(path): \(String(cString: strerror(errno))).")
        }
        defer { close(descriptor) }
        let text = Array((Data(bytes).base64EncodedString() + "\n").utf8)
        let written = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == text.count, fsync(descriptor) == 0 else {
            throw ConfigurationError("Cannot write the master key file \(path).")
        }
        return try MasterKey(bytes: bytes)
    }

    private static func load(at path: String) throws -> MasterKey {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        if let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
            throw ConfigurationError(
                "The master key file \(path) is open to other users (mode \(String(mode, radix: 8))); "
                    + "run `chmod 600 \(path)` and start again.")
        }
        guard let existing = FileManager.default.contents(atPath: path),
            let text = String(data: existing, encoding: .utf8)
        else {
            throw ConfigurationError("The master key file \(path) cannot be read as text.")
        }
        return try MasterKey(base64: text)
    }
}
