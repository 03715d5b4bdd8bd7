#if canImport(Security)
    import Foundation
    import Security

    /// A ``SecureStore`` in the Keychain: one generic-password item per entry, readable after the first unlock and
    /// never migrated to another device.
    ///
    /// Give an `accessGroup` shared with a notification service extension so it can read the factor keys and approve a
    /// challenge without opening the app.
    public struct KeychainSecureStore: SecureStore {
        /// The `kSecAttrService` of every item.
        public let service: String
        /// The Keychain access group, or `nil` for the app's default group.
        public let accessGroup: String?

        /// Creates a store.
        ///
        /// - Parameters:
        ///   - service: The service name of the items.
        ///   - accessGroup: A Keychain access group shared with app extensions, or `nil`.
        public init(service: String = "io.verity.kit", accessGroup: String? = nil) {
            self.service = service
            self.accessGroup = accessGroup
        }

        /// The item under `key`.
        ///
        /// - Parameter key: The item's name (its `kSecAttrAccount`).
        /// - Returns: The data, or `nil` when there is no such item.
        /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
        public func data(forKey key: String) throws -> Data? {
            var query = baseQuery(account: key)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            switch status {
            case errSecSuccess:
                guard let data = result as? Data else { throw VerityKitError.storage("A Keychain item holds no data.") }
                return data
            case errSecItemNotFound:
                return nil
            default:
                throw Self.failure("read", status)
            }
        }

        /// Stores `data` under `key`, updating the item when it exists.
        ///
        /// - Parameters:
        ///   - data: The bytes to keep.
        ///   - key: The item's name.
        /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
        public func set(_ data: Data, forKey key: String) throws {
            let query = baseQuery(account: key)
            let attributes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            let status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                let added = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
                guard added == errSecSuccess else { throw Self.failure("add", added) }
            } else if status != errSecSuccess {
                throw Self.failure("update", status)
            }
        }

        /// Deletes the item under `key`.
        ///
        /// - Parameter key: The item's name.
        /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
        public func removeData(forKey key: String) throws {
            let status = SecItemDelete(baseQuery(account: key) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure("delete", status) }
        }

        /// Deletes every item of ``service`` (in ``accessGroup``).
        ///
        /// - Throws: ``VerityKitError/storage(_:)`` with the `OSStatus` when the Keychain fails.
        public func removeAll() throws {
            let status = SecItemDelete(baseQuery(account: nil) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure("delete", status) }
        }

        private func baseQuery(account: String?) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                // The data-protection Keychain on macOS too, so access groups and accessibility behave as on iOS.
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let account { query[kSecAttrAccount as String] = account }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        private static func failure(_ operation: String, _ status: OSStatus) -> VerityKitError {
            .storage("Keychain \(operation) failed with OSStatus \(status).")
        }
    }
#endif
