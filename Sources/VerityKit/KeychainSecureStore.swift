import Foundation

/// A ``SecureStore`` in the Keychain: one generic-password item per entry, readable after the first unlock.
///
/// Items stay on this device unless the app allows them to migrate (`allowIphoneMigration`); device keys never do.
/// Give an `accessGroup` shared with the app's notification extensions so they can read the factor records and sign
/// with the factor keys; an app that adds the group later moves its existing items with
/// ``moveItemsIntoAccessGroup(from:)``.
///
/// Every query goes through a `KeychainCalls` table: Security's functions on Apple platforms, a recording double in
/// VerityKit's tests (so the type exists everywhere, but only Apple platforms can create one).
public struct KeychainSecureStore: SecureStore {
    /// The `kSecAttrService` of every item.
    public let service: String
    /// The Keychain access group, or `nil` for the app's default group.
    public let accessGroup: String?
    /// Whether items may move to a new iPhone (an encrypted backup restored, or a device-to-device migration). Device
    /// keys never move, whatever this says: a factor then has to be enrolled again on the new device.
    public let allowIphoneMigration: Bool

    let calls: KeychainCalls

    #if canImport(Security)
        /// Creates a store.
        ///
        /// - Parameters:
        ///   - service: The service name of the items.
        ///   - accessGroup: A Keychain access group shared with app extensions, or `nil`.
        ///   - allowIphoneMigration: Whether items other than device keys may move to a new iPhone
        ///     (`kSecAttrAccessibleAfterFirstUnlock` instead of `…ThisDeviceOnly`).
        public init(service: String = "io.verity.kit", accessGroup: String? = nil, allowIphoneMigration: Bool = false) {
            self.init(
                service: service, accessGroup: accessGroup, allowIphoneMigration: allowIphoneMigration, calls: .system)
        }
    #endif

    init(service: String, accessGroup: String?, allowIphoneMigration: Bool, calls: KeychainCalls) {
        self.service = service
        self.accessGroup = accessGroup
        self.allowIphoneMigration = allowIphoneMigration
        self.calls = calls
    }

    /// The item under `key`.
    ///
    /// - Parameter key: The item's name (its `kSecAttrAccount`).
    /// - Returns: The data, or `nil` when there is no such item.
    /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
    public func data(forKey key: String) throws -> Data? {
        var query = itemQuery(account: key)
        query.returnsData = true
        query.matchesOne = true
        switch calls.copyData(query) {
        case .success(let data): return data
        case .failure(.itemNotFound): return nil
        case .failure(let status): throw Self.failure("read", status)
        }
    }

    /// Stores `data` under `key`, updating the item when it exists; it may migrate when ``allowIphoneMigration`` is
    /// set.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
    public func set(_ data: Data, forKey key: String) throws {
        try set(data, forKey: key, deviceBound: false)
    }

    /// Stores `data` under `key`; a `deviceBound` item (a device key) never leaves this device.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    ///   - deviceBound: Whether the item must stay on this device even when ``allowIphoneMigration`` is set.
    /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
    public func set(_ data: Data, forKey key: String, deviceBound: Bool) throws {
        let query = itemQuery(account: key)
        var changes = KeychainQuery()
        changes.value = data
        changes.accessible =
            allowIphoneMigration && !deviceBound ? .afterFirstUnlock : .afterFirstUnlockThisDeviceOnly
        let status = calls.update(query, changes)
        if status == .itemNotFound {
            var item = query
            item.value = changes.value
            item.accessible = changes.accessible
            let added = calls.add(item)
            guard added == .success else { throw Self.failure("add", added) }
        } else if status != .success {
            throw Self.failure("update", status)
        }
    }

    /// Deletes the item under `key`.
    ///
    /// - Parameter key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
    public func removeData(forKey key: String) throws {
        let status = calls.delete(itemQuery(account: key))
        guard status == .success || status == .itemNotFound else { throw Self.failure("delete", status) }
    }

    /// Deletes every item of ``service`` (in ``accessGroup``).
    ///
    /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
    public func removeAll() throws {
        let status = calls.delete(itemQuery(account: nil))
        guard status == .success || status == .itemNotFound else { throw Self.failure("delete", status) }
    }

    /// Moves the items and Secure Enclave keys of ``service`` from another access group into ``accessGroup``: what an
    /// app calls once, at launch, after adding a shared access group, so its extensions see the factors enrolled
    /// before. Calling it again finds nothing to move.
    ///
    /// - Parameter previousGroup: The group the items are in now; `nil` for the app's default group.
    /// - Throws: ``VerityKitError/storage(_:)`` when this store has no access group, or the Keychain fails (an item
    ///   that already exists in the new group is a failure, so nothing is overwritten).
    public func moveItemsIntoAccessGroup(from previousGroup: String? = nil) throws {
        guard let accessGroup, accessGroup != previousGroup else {
            throw VerityKitError.storage("Items can move only into this store's access group, which is not set.")
        }
        var changes = KeychainQuery()
        changes.accessGroup = accessGroup
        var items = itemQuery(account: nil)
        items.accessGroup = previousGroup
        var keys = SecureEnclaveKeyring(service: service, accessGroup: previousGroup, calls: calls).everyKeyQuery
        keys.accessGroup = previousGroup
        for query in [items, keys] {
            let status = calls.update(query, changes)
            guard status == .success || status == .itemNotFound else { throw Self.failure("move", status) }
        }
    }

    /// The Secure Enclave keys that go with this store: in the same Keychain, service and access group.
    var secureEnclaveKeys: SecureEnclaveKeyring {
        SecureEnclaveKeyring(service: service, accessGroup: accessGroup, calls: calls)
    }

    private func itemQuery(account: String?) -> KeychainQuery {
        var query = KeychainQuery()
        query.itemClass = .genericPassword
        query.service = service
        query.account = account
        query.accessGroup = accessGroup
        query.usesDataProtectionKeychain = true
        return query
    }

    private static func failure(_ operation: String, _ status: KeychainStatus) -> VerityKitError {
        .storage("Keychain \(operation) failed with OSStatus \(status.code).")
    }
}
