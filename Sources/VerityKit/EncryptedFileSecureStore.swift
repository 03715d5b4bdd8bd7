import Crypto
import Foundation
import VerityCore

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A ``SecureStore`` that keeps each item in its own AES-GCM-sealed file in a directory the app chooses.
///
/// On first write the store creates the directory (permissions 0700) and a key file `store.key` holding 32 random
/// bytes, created with permissions 0600: in the directory, or in a separate `keyDirectory`. Two keys are derived from it with HKDF-SHA256: one seals the items
/// (AES-256-GCM, authenticated together with the item's name, so sealed files cannot be swapped), the other names
/// their files (an HMAC of the item's name), so the directory shows neither names nor contents.
///
/// On Apple platforms every file and directory gets the data protection class `completeUntilFirstUserAuthentication`
/// (encrypted by the system until the phone is first unlocked after a restart, so a notification extension can still
/// read while it is locked) and is excluded from backups, as Keychain items that stay on the device are.
///
/// - Important: Unless `keyDirectory` is given, the key file lies next to the data it protects. That guards against
///   casual reads — backups or log collectors that pick up the data files, other users without access to the
///   directory — not against anyone who can read the directory as the same user. On Apple platforms prefer
///   `KeychainSecureStore`; an app-group fallback gives `keyDirectory` another directory of the group's container, so
///   that what copies the data directory does not get its key.
// @unchecked Sendable: the only mutable state, `cachedKeys`, is read and written only while holding `lock`, which
// also serialises all file access of this instance.
public final class EncryptedFileSecureStore: SecureStore, @unchecked Sendable {
    /// The name of the key file in ``directory``.
    public static let keyFileName = "store.key"
    private static let itemExtension = "sealed"
    private static let secretByteCount = 32

    /// The directory holding the sealed items (and the key file, unless ``keyDirectory`` is another).
    public let directory: URL
    /// The directory holding the key file.
    public let keyDirectory: URL

    private let lock = NSLock()
    private var cachedKeys: Keys?

    private struct Keys {
        var sealing: SymmetricKey
        var naming: SymmetricKey
    }

    /// Creates a store over `directory`; nothing is created until the first write.
    ///
    /// - Parameters:
    ///   - directory: A directory for VerityKit alone, for example in Application Support.
    ///   - keyDirectory: Where the key file goes, when not beside the data; `nil` for `directory`.
    public init(directory: URL, keyDirectory: URL? = nil) {
        self.directory = directory
        self.keyDirectory = keyDirectory ?? directory
    }

    /// The item under `key`, decrypted.
    ///
    /// - Parameter key: The item's name.
    /// - Returns: The data, or `nil` when there is no such item.
    /// - Throws: ``VerityKitError/storage(_:)`` when the file cannot be read or does not authenticate.
    public func data(forKey key: String) throws -> Data? {
        try lock.withLock {
            guard let keys = try loadKeys(creating: false) else { return nil }
            let file = fileURL(forKey: key, keys: keys)
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            do {
                let box = try AES.GCM.SealedBox(combined: try Data(contentsOf: file))
                return try AES.GCM.open(box, using: keys.sealing, authenticating: Data(key.utf8))
            } catch {
                throw VerityKitError.storage("An encrypted item could not be read or failed authentication.")
            }
        }
    }

    /// Seals `data` and writes it, atomically, to the item's file.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` when the directory, key file or item file cannot be written.
    public func set(_ data: Data, forKey key: String) throws {
        try lock.withLock {
            guard let keys = try loadKeys(creating: true) else {
                throw VerityKitError.storage("The store's key file could not be created.")
            }
            let file = fileURL(forKey: key, keys: keys)
            do {
                let box = try AES.GCM.seal(data, using: keys.sealing, authenticating: Data(key.utf8))
                guard let sealed = box.combined else {
                    throw VerityKitError.storage("An item could not be sealed.")
                }
                try sealed.write(to: file, options: [.atomic, .completeFileProtectionUntilFirstUserAuthentication])
                try Self.protect(file, permissions: 0o600)
            } catch let error as VerityKitError {
                throw error
            } catch {
                throw VerityKitError.storage("An encrypted item could not be written: \(error.localizedDescription)")
            }
        }
    }

    /// Deletes the item's file.
    ///
    /// - Parameter key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` when the file exists but cannot be deleted.
    public func removeData(forKey key: String) throws {
        try lock.withLock {
            guard let keys = try loadKeys(creating: false) else { return }
            try removeFile(at: fileURL(forKey: key, keys: keys))
        }
    }

    /// Deletes every sealed item and the key file; the directory itself stays.
    ///
    /// - Throws: ``VerityKitError/storage(_:)`` when a file cannot be deleted.
    public func removeAll() throws {
        try lock.withLock {
            let manager = FileManager.default
            guard manager.fileExists(atPath: directory.path) else { return }
            let names: [String]
            do {
                names = try manager.contentsOfDirectory(atPath: directory.path)
            } catch {
                throw VerityKitError.storage("The store's directory could not be listed.")
            }
            for name in names where name.hasSuffix(".\(Self.itemExtension)") {
                try removeFile(at: directory.appendingPathComponent(name))
            }
            // The key file goes last, so a failure above leaves everything still readable.
            try removeFile(at: keyDirectory.appendingPathComponent(Self.keyFileName))
            cachedKeys = nil
        }
    }

    private func removeFile(at url: URL) throws {
        let manager = FileManager.default
        guard manager.fileExists(atPath: url.path) else { return }
        do {
            try manager.removeItem(at: url)
        } catch {
            throw VerityKitError.storage("A file of the store could not be deleted.")
        }
    }

    private func fileURL(forKey key: String, keys: Keys) -> URL {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(key.utf8), using: keys.naming)
        let name = Hex.encode(mac)
        return directory.appendingPathComponent("\(name).\(Self.itemExtension)")
    }

    /// Reads the key file (creating it first when `creating` is set) and derives the keys. Call with `lock` held.
    private func loadKeys(creating: Bool) throws -> Keys? {
        if let cachedKeys { return cachedKeys }
        let keyFile = keyDirectory.appendingPathComponent(Self.keyFileName)
        if !FileManager.default.fileExists(atPath: keyFile.path) {
            guard creating else { return nil }
            try createKeyFile(at: keyFile)
        }
        let secret: Data
        do {
            secret = try Data(contentsOf: keyFile)
        } catch {
            throw VerityKitError.storage("The store's key file could not be read.")
        }
        guard secret.count == Self.secretByteCount else {
            throw VerityKitError.storage("The store's key file is damaged.")
        }
        let material = SymmetricKey(data: secret)
        let salt = Data("VerityKit.EncryptedFileSecureStore".utf8)
        let keys = Keys(
            sealing: HKDF<SHA256>.deriveKey(
                inputKeyMaterial: material, salt: salt, info: Data("item sealing v1".utf8), outputByteCount: 32),
            naming: HKDF<SHA256>.deriveKey(
                inputKeyMaterial: material, salt: salt, info: Data("item naming v1".utf8), outputByteCount: 32)
        )
        cachedKeys = keys
        return keys
    }

    /// Creates the key file with `O_EXCL` and mode 0600, so it is never readable by others, not even briefly, and
    /// a file created meanwhile by another process is kept rather than overwritten.
    private func createKeyFile(at url: URL) throws {
        do {
            for folder in Set([directory, keyDirectory]) {
                try FileManager.default.createDirectory(
                    at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try Self.protect(folder, permissions: 0o700)
            }
        } catch {
            throw VerityKitError.storage("The store's directory could not be created.")
        }
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw VerityKitError.storage("The store's key file could not be created.")
        }
        defer { close(descriptor) }
        let secret = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let written = secret.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == secret.count, fsync(descriptor) == 0 else {
            try? FileManager.default.removeItem(at: url)
            throw VerityKitError.storage("The store's key file could not be written.")
        }
        do {
            try Self.protect(url, permissions: 0o600)
        } catch {
            throw VerityKitError.storage("The store's key file could not be protected.")
        }
    }

    /// Sets the permissions, the data protection class (on Apple platforms; elsewhere Foundation ignores it) and the
    /// exclusion from backups.
    private static func protect(_ url: URL, permissions: Int) throws {
        try FileManager.default.setAttributes(
            [.posixPermissions: permissions, .protectionKey: FileProtectionType.completeUntilFirstUserAuthentication],
            ofItemAtPath: url.path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var url = url
        try url.setResourceValues(values)
    }
}
