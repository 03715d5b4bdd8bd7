#if canImport(Security)
    import CryptoKit
    import Foundation
    import LocalAuthentication
    import Security

    extension KeychainCalls {
        /// The real thing: each entry spells its `KeychainQuery` with Security's constants and calls the framework.
        static let system = KeychainCalls(
            add: { query in
                KeychainStatus(code: SecItemAdd(query.attributes() as CFDictionary, nil))
            },
            copyData: { query in
                var result: CFTypeRef?
                let status = SecItemCopyMatching(query.attributes() as CFDictionary, &result)
                guard status == errSecSuccess else { return .failure(KeychainStatus(code: status)) }
                guard let data = result as? Data else { return .failure(.itemNotFound) }
                return .success(data)
            },
            update: { query, changes in
                KeychainStatus(
                    code: SecItemUpdate(query.attributes() as CFDictionary, changes.attributes() as CFDictionary))
            },
            delete: { query in
                KeychainStatus(code: SecItemDelete(query.attributes() as CFDictionary))
            },
            createRandomKey: { query in
                // A key whose access control Security refuses is not made at all, rather than made without one.
                var access: SecAccessControl?
                if let control = query.privateKeyAccessControl {
                    guard let made = control.secAccessControl() else {
                        return .failure(KeychainStatus(code: errSecParam))
                    }
                    access = made
                }
                var error: Unmanaged<CFError>?
                guard let key = SecKeyCreateRandomKey(query.attributes(accessControl: access) as CFDictionary, &error)
                else {
                    return .failure(KeychainStatus(error?.takeRetainedValue()))
                }
                return .success(KeychainKey(reference: key))
            },
            copyKey: { query in
                var result: CFTypeRef?
                let status = SecItemCopyMatching(query.attributes() as CFDictionary, &result)
                guard status == errSecSuccess else { return .failure(KeychainStatus(code: status)) }
                guard let result else { return .failure(.itemNotFound) }
                return .success(KeychainKey(reference: result))
            },
            publicKey: { key in
                guard let publicKey = SecKeyCopyPublicKey(key.secKey) else { return nil }
                var error: Unmanaged<CFError>?
                return SecKeyCopyExternalRepresentation(publicKey, &error) as Data?
            },
            sign: { key, data in
                var error: Unmanaged<CFError>?
                guard
                    let signature = SecKeyCreateSignature(
                        key.secKey, .ecdsaSignatureMessageX962SHA256, data as CFData, &error)
                else { return .failure(KeychainStatus(error?.takeRetainedValue())) }
                return .success(signature as Data)
            },
            hasSecureEnclave: SecureEnclave.isAvailable
        )
    }

    extension KeychainKey {
        // Only `copyKey` and `createRandomKey` make a `KeychainKey`, both from a `SecKey`.
        fileprivate var secKey: SecKey {
            unsafeDowncast(reference, to: SecKey.self)
        }
    }

    extension KeychainStatus {
        /// The status of a failed `SecKey` call: a cancelled or failed prompt by its LocalAuthentication code, anything
        /// else by its own.
        fileprivate init(_ error: CFError?) {
            guard let cfError = error else {
                self = KeychainStatus(code: errSecInteractionNotAllowed)
                return
            }
            let error = cfError as any Error as NSError
            if error.domain == LAError.errorDomain {
                switch LAError.Code(rawValue: error.code) {
                case .userCancel, .systemCancel, .appCancel, .userFallback: self = .userCanceled
                case .authenticationFailed: self = .authFailed
                default: self = KeychainStatus(code: Int32(clamping: error.code))
                }
            } else {
                self = KeychainStatus(code: Int32(clamping: error.code))
            }
        }
    }

    extension KeychainQuery {
        /// The attribute dictionary Security takes for this query; `accessControl` is the private key's, made from
        /// `privateKeyAccessControl` by the caller.
        fileprivate func attributes(accessControl: SecAccessControl? = nil) -> [String: Any] {
            var attributes: [String: Any] = [:]
            switch itemClass {
            case .genericPassword: attributes[kSecClass as String] = kSecClassGenericPassword
            case .key: attributes[kSecClass as String] = kSecClassKey
            case nil: break
            }
            if let service { attributes[kSecAttrService as String] = service }
            if let account { attributes[kSecAttrAccount as String] = account }
            if let label { attributes[kSecAttrLabel as String] = label }
            if let accessGroup { attributes[kSecAttrAccessGroup as String] = accessGroup }
            if let accessible { attributes[kSecAttrAccessible as String] = accessible.constant }
            if let value { attributes[kSecValueData as String] = value }
            if isP256Key {
                attributes[kSecAttrKeyType as String] = kSecAttrKeyTypeECSECPrimeRandom
                attributes[kSecAttrKeySizeInBits as String] = 256
            }
            if isInSecureEnclave { attributes[kSecAttrTokenID as String] = kSecAttrTokenIDSecureEnclave }
            if privateKeyAccessControl != nil {
                var privateKey: [String: Any] = [kSecAttrIsPermanent as String: true]
                if let applicationTag { privateKey[kSecAttrApplicationTag as String] = applicationTag }
                if let accessControl { privateKey[kSecAttrAccessControl as String] = accessControl }
                attributes[kSecPrivateKeyAttrs as String] = privateKey
            } else if let applicationTag {
                attributes[kSecAttrApplicationTag as String] = applicationTag
            }
            if returnsData { attributes[kSecReturnData as String] = true }
            if returnsReference { attributes[kSecReturnRef as String] = true }
            if matchesOne { attributes[kSecMatchLimit as String] = kSecMatchLimitOne }
            if usesDataProtectionKeychain { attributes[kSecUseDataProtectionKeychain as String] = true }
            if let authenticationContext, let context = authenticationContext.context as? LAContext {
                attributes[kSecUseAuthenticationContext as String] = context
            }
            return attributes
        }
    }

    extension KeychainQuery.Accessibility {
        fileprivate var constant: CFString {
            switch self {
            case .afterFirstUnlock: kSecAttrAccessibleAfterFirstUnlock
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            }
        }
    }

    extension KeychainQuery.AccessControl {
        /// The `SecAccessControl`, or `nil` when Security refuses the flags.
        fileprivate func secAccessControl() -> SecAccessControl? {
            var secFlags: SecAccessControlCreateFlags = []
            for flag in flags {
                switch flag {
                case .privateKeyUsage: secFlags.insert(.privateKeyUsage)
                case .userPresence: secFlags.insert(.userPresence)
                }
            }
            var error: Unmanaged<CFError>?
            return SecAccessControlCreateWithFlags(nil, accessibility.constant, secFlags, &error)
        }
    }
#endif
