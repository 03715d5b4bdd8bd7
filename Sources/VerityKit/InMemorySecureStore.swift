import Foundation

/// A ``SecureStore`` that keeps items in memory only, for tests, previews and apps that must persist nothing.
// @unchecked Sendable: the only mutable state, `items`, is read and written only while holding `lock`.
public final class InMemorySecureStore: SecureStore, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: Data]

    /// Creates a store.
    ///
    /// - Parameter items: The items it starts with.
    public init(items: [String: Data] = [:]) {
        self.items = items
    }

    /// A copy of every item, by name.
    public var allItems: [String: Data] {
        lock.withLock { items }
    }

    /// The data stored under `key`, or `nil`.
    ///
    /// - Parameter key: The item's name.
    /// - Returns: The data, or `nil` when there is no such item.
    public func data(forKey key: String) -> Data? {
        lock.withLock { items[key] }
    }

    /// Stores `data` under `key`.
    ///
    /// - Parameters:
    ///   - data: The bytes to keep.
    ///   - key: The item's name.
    public func set(_ data: Data, forKey key: String) {
        lock.withLock { items[key] = data }
    }

    /// Removes the item under `key`.
    ///
    /// - Parameter key: The item's name.
    public func removeData(forKey key: String) {
        lock.withLock { _ = items.removeValue(forKey: key) }
    }

    /// Removes every item.
    public func removeAll() {
        lock.withLock { items.removeAll() }
    }
}
