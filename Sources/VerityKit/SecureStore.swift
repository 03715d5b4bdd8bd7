import Foundation

/// Where VerityKit keeps what must survive a restart: device keys, factor records and pending enrollments.
///
/// Calls are synchronous and complete their write before returning, so a caller with exclusive access (``VerityPush``
/// is an actor) can read, change and write an item without another task slipping in between. Implementations must be
/// safe to call from any task and throw ``VerityKitError/storage(_:)`` when they fail.
public protocol SecureStore: Sendable {
    /// The data stored under `key`.
    ///
    /// - Parameter key: The item's name.
    /// - Returns: The data, or `nil` when there is no such item.
    /// - Throws: ``VerityKitError/storage(_:)`` when the item exists but cannot be read.
    func data(forKey key: String) throws -> Data?

    /// Stores `data` under `key`, replacing any previous value.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` when the item cannot be written.
    func set(_ data: Data, forKey key: String) throws

    /// Stores `data` under `key`; a `deviceBound` item (a device key) must never leave this device, even where the
    /// store lets other items migrate to a new one.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    ///   - deviceBound: Whether the item must stay on this device.
    /// - Throws: ``VerityKitError/storage(_:)`` when the item cannot be written.
    func set(_ data: Data, forKey key: String, deviceBound: Bool) throws

    /// Removes the item under `key`; does nothing when there is none.
    ///
    /// - Parameter key: The item's name.
    /// - Throws: ``VerityKitError/storage(_:)`` when the item cannot be removed.
    func removeData(forKey key: String) throws

    /// Removes every item of this store.
    ///
    /// - Throws: ``VerityKitError/storage(_:)`` when the items cannot be removed.
    func removeAll() throws
}

extension SecureStore {
    /// Stores `data` under `key`: a store whose items never leave the device keeps every item the same way.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    ///   - deviceBound: Whether the item must stay on this device; this store keeps every item so.
    public func set(_ data: Data, forKey key: String, deviceBound: Bool) throws {
        try set(data, forKey: key)
    }
}
