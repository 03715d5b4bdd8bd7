import Crypto
import Foundation
import Testing

@testable import VerityKit

/// A Keychain and Secure Enclave in memory, behind ``KeychainCalls``: it records every query, answers as the Keychain
/// does (a query without an access group matches every group), and checks each query against the rules Apple
/// documents, collecting what breaks them in ``violations``.
///
/// Secure Enclave keys are software keys here; a key with `userPresence` access control counts a system prompt
/// (``systemPrompts``) each time it signs without the `LAContext` of a verification, and signs or fails as
/// ``promptAnswer`` says.
// @unchecked Sendable: every mutable property is read and written only while holding `lock`.
final class RecordingKeychain: @unchecked Sendable {
    struct Item {
        var service: String
        var account: String
        var accessGroup: String
        var value: Data
        var accessible: KeychainQuery.Accessibility
    }

    struct Key {
        var tag: Data
        var label: String?
        var accessGroup: String
        var privateKey: P256.Signing.PrivateKey
        var access: KeychainQuery.AccessControl
    }

    /// One call, by function name.
    struct Call: Equatable {
        var function: String
        var query: KeychainQuery
        var changes: KeychainQuery?
    }

    private let lock = NSLock()
    private var storedItems: [Item] = []
    private var storedKeys: [Key] = []
    private var recorded: [Call] = []
    private var broken: [String] = []
    private var prompts = 0
    /// The access group items land in when a query names none: the app's default group.
    let defaultGroup: String
    let hasSecureEnclave: Bool
    /// What the system prompt of a `userPresence` key answers when it has to show one.
    var promptAnswer: KeychainStatus {
        get { lock.withLock { storedPromptAnswer } }
        set { lock.withLock { storedPromptAnswer = newValue } }
    }
    private var storedPromptAnswer = KeychainStatus.success

    init(defaultGroup: String = "TEAMID.com.example.app", hasSecureEnclave: Bool = true) {
        self.defaultGroup = defaultGroup
        self.hasSecureEnclave = hasSecureEnclave
    }

    var calls: [Call] { lock.withLock { recorded } }
    var violations: [String] { lock.withLock { broken } }
    var systemPrompts: Int { lock.withLock { prompts } }
    var items: [Item] { lock.withLock { storedItems } }
    var keys: [Key] { lock.withLock { storedKeys } }

    /// The function table over this keychain.
    var table: KeychainCalls {
        KeychainCalls(
            add: { self.add($0) }, copyData: { self.copyData($0) }, update: { self.update($0, $1) },
            delete: { self.delete($0) }, createRandomKey: { self.createRandomKey($0) }, copyKey: { self.copyKey($0) },
            publicKey: { self.publicKey($0) }, sign: { self.sign($0, $1) }, hasSecureEnclave: hasSecureEnclave)
    }

    // MARK: - Rules (Security's "Keychain services" and "Protecting keys with the Secure Enclave" articles)

    private func check(_ condition: Bool, _ rule: String, _ function: String) {
        if !condition { broken.append("\(function): \(rule)") }
    }

    /// Rules every query follows.
    private func checkCommon(_ query: KeychainQuery, _ function: String) {
        check(query.itemClass != nil, "names its kSecClass", function)
        check(query.usesDataProtectionKeychain, "uses the data-protection Keychain", function)
        if query.itemClass == .genericPassword {
            check(query.service != nil, "a generic password names its service", function)
            check(query.applicationTag == nil && !query.isP256Key, "a generic password has no key attributes", function)
        }
        if query.itemClass == .key {
            check(query.service == nil && query.account == nil, "a key has no service or account", function)
        }
    }

    // MARK: - Calls

    private func add(_ query: KeychainQuery) -> KeychainStatus {
        lock.withLock {
            recorded.append(Call(function: "SecItemAdd", query: query))
            checkCommon(query, "SecItemAdd")
            check(query.itemClass == .genericPassword, "adds only generic passwords (keys are generated)", "SecItemAdd")
            check(query.account != nil && query.value != nil, "adds an account with data", "SecItemAdd")
            check(query.accessible != nil, "sets kSecAttrAccessible", "SecItemAdd")
            guard let service = query.service, let account = query.account, let value = query.value else {
                return KeychainStatus(code: -50)
            }
            let group = query.accessGroup ?? defaultGroup
            if storedItems.contains(where: { $0.service == service && $0.account == account && $0.accessGroup == group }
            ) {
                return .duplicateItem
            }
            storedItems.append(
                Item(
                    service: service, account: account, accessGroup: group, value: value,
                    accessible: query.accessible ?? .afterFirstUnlock))
            return .success
        }
    }

    private func copyData(_ query: KeychainQuery) -> Result<Data, KeychainStatus> {
        lock.withLock {
            recorded.append(Call(function: "SecItemCopyMatching", query: query))
            checkCommon(query, "SecItemCopyMatching")
            check(query.returnsData && query.matchesOne, "asks for one item's data", "SecItemCopyMatching")
            guard let item = storedItems.first(where: { matches($0, query) }) else { return .failure(.itemNotFound) }
            return .success(item.value)
        }
    }

    private func update(_ query: KeychainQuery, _ changes: KeychainQuery) -> KeychainStatus {
        lock.withLock {
            recorded.append(Call(function: "SecItemUpdate", query: query, changes: changes))
            checkCommon(query, "SecItemUpdate")
            check(
                changes.itemClass == nil && changes.service == nil && changes.account == nil,
                "changes attributes only", "SecItemUpdate")
            var found = false
            if query.itemClass == .genericPassword {
                for index in storedItems.indices where matches(storedItems[index], query) {
                    found = true
                    if let value = changes.value { storedItems[index].value = value }
                    if let accessible = changes.accessible { storedItems[index].accessible = accessible }
                    if let group = changes.accessGroup { storedItems[index].accessGroup = group }
                }
            } else {
                for index in storedKeys.indices where matches(storedKeys[index], query) {
                    found = true
                    if let group = changes.accessGroup { storedKeys[index].accessGroup = group }
                }
            }
            return found ? .success : .itemNotFound
        }
    }

    private func delete(_ query: KeychainQuery) -> KeychainStatus {
        lock.withLock {
            recorded.append(Call(function: "SecItemDelete", query: query))
            checkCommon(query, "SecItemDelete")
            let before = storedItems.count + storedKeys.count
            if query.itemClass == .genericPassword {
                storedItems.removeAll { matches($0, query) }
            } else {
                storedKeys.removeAll { matches($0, query) }
            }
            return storedItems.count + storedKeys.count < before ? .success : .itemNotFound
        }
    }

    private func createRandomKey(_ query: KeychainQuery) -> Result<KeychainKey, KeychainStatus> {
        lock.withLock {
            let function = "SecKeyCreateRandomKey"
            recorded.append(Call(function: function, query: query))
            checkCommon(query, function)
            check(query.itemClass == .key, "makes a key item", function)
            check(query.isP256Key, "makes a P-256 key (kSecAttrKeyTypeECSECPrimeRandom, 256 bits)", function)
            check(query.isInSecureEnclave, "makes it in the Secure Enclave (kSecAttrTokenIDSecureEnclave)", function)
            check(
                query.privateKeyAccessControl?.flags.contains(.privateKeyUsage) == true,
                "gives it access control with .privateKeyUsage", function)
            check(
                query.privateKeyAccessControl?.accessibility == .afterFirstUnlockThisDeviceOnly,
                "keeps it on this device (…ThisDeviceOnly)", function)
            check(query.accessible == nil, "sets the protection in the access control only", function)
            check(query.applicationTag != nil, "names it with kSecAttrApplicationTag", function)
            guard hasSecureEnclave else { return .failure(KeychainStatus(code: -4)) }
            guard let tag = query.applicationTag, let access = query.privateKeyAccessControl else {
                return .failure(KeychainStatus(code: -50))
            }
            let key = Key(
                tag: tag, label: query.label, accessGroup: query.accessGroup ?? defaultGroup,
                privateKey: P256.Signing.PrivateKey(), access: access)
            storedKeys.append(key)
            return .success(KeychainKey(reference: KeyReference(key: key, context: nil)))
        }
    }

    private func copyKey(_ query: KeychainQuery) -> Result<KeychainKey, KeychainStatus> {
        lock.withLock {
            recorded.append(Call(function: "SecItemCopyMatching", query: query))
            checkCommon(query, "SecItemCopyMatching")
            check(query.returnsReference && query.matchesOne, "asks for one key's reference", "SecItemCopyMatching")
            guard let key = storedKeys.first(where: { matches($0, query) }) else { return .failure(.itemNotFound) }
            return .success(KeychainKey(reference: KeyReference(key: key, context: query.authenticationContext)))
        }
    }

    private func publicKey(_ key: KeychainKey) -> Data? {
        (key.reference as? KeyReference)?.key.privateKey.publicKey.x963Representation
    }

    private func sign(_ key: KeychainKey, _ data: Data) -> Result<Data, KeychainStatus> {
        lock.withLock {
            guard let reference = key.reference as? KeyReference else { return .failure(KeychainStatus(code: -50)) }
            recorded.append(Call(function: "SecKeyCreateSignature", query: KeychainQuery()))
            if reference.key.access.flags.contains(.userPresence), reference.context == nil {
                // No verification handed over: the system asks the owner itself.
                prompts += 1
                if storedPromptAnswer != .success { return .failure(storedPromptAnswer) }
            }
            do {
                return .success(try reference.key.privateKey.signature(for: data).derRepresentation)
            } catch {
                return .failure(KeychainStatus(code: -50))
            }
        }
    }

    private func matches(_ item: Item, _ query: KeychainQuery) -> Bool {
        item.service == query.service && (query.account.map { $0 == item.account } ?? true)
            && (query.accessGroup.map { $0 == item.accessGroup } ?? true)
    }

    private func matches(_ key: Key, _ query: KeychainQuery) -> Bool {
        (query.applicationTag.map { $0 == key.tag } ?? true) && (query.label.map { $0 == key.label } ?? true)
            && (query.accessGroup.map { $0 == key.accessGroup } ?? true)
    }

    /// What `copyKey` hands out: the key and the context it was found with.
    private final class KeyReference: @unchecked Sendable {
        let key: Key
        let context: AuthenticationContext?

        init(key: Key, context: AuthenticationContext?) {
            self.key = key
            self.context = context
        }
    }
}
