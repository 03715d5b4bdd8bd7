// A stand-in for Apple's Security framework, for type-checking VerityKit's Apple-only code on Linux. It never ships
// and never runs: every function traps. Each declaration is transcribed from the Swift declaration Apple's
// documentation shows for it (developer.apple.com/documentation/security/<symbol>), with the same labels,
// optionality and types; the page is named above each group.
//
// Core Foundation is not exposed by Foundation on Linux, so the few CF types Security's API uses are declared here.
// Where Apple's type is toll-free bridged to a Foundation class (CFDictionary and NSDictionary, CFString and NSString,
// CFData and NSData, CFError and NSError), the stand-in is a type alias of that class, so that the coercions Swift
// allows on Apple platforms (`query as CFDictionary`, `kSecClass as String`, `result as? Data`) type-check here too.
import Foundation

// https://developer.apple.com/documentation/corefoundation/cftyperef: `typealias CFTypeRef = AnyObject`
public typealias CFTypeRef = AnyObject
// https://developer.apple.com/documentation/corefoundation/cfdictionary (toll-free bridged with NSDictionary)
public typealias CFDictionary = NSDictionary
// https://developer.apple.com/documentation/corefoundation/cfstring (toll-free bridged with NSString)
public typealias CFString = NSString
// https://developer.apple.com/documentation/corefoundation/cfdata (toll-free bridged with NSData)
public typealias CFData = NSData
// https://developer.apple.com/documentation/corefoundation/cferror (toll-free bridged with NSError)
public typealias CFError = NSError
// https://developer.apple.com/documentation/corefoundation/cfallocator: `class CFAllocator`
public final class CFAllocator {}
// https://developer.apple.com/documentation/kernel/osstatus: `typealias OSStatus = Int32`
public typealias OSStatus = Int32

private func unavailable() -> Never {
    fatalError("Security stand-in: type-checking only")
}

// MARK: - Keychain items
// https://developer.apple.com/documentation/security/secitemadd(_:_:)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    unavailable()
}
// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    unavailable()
}
// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    unavailable()
}
// https://developer.apple.com/documentation/security/secitemdelete(_:)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    unavailable()
}

// MARK: - Result codes (https://developer.apple.com/documentation/security/security-framework-result-codes),
// imported as `var errSecSuccess: OSStatus { get }`
public var errSecSuccess: OSStatus { 0 }
public var errSecItemNotFound: OSStatus { -25300 }
public var errSecDuplicateItem: OSStatus { -25299 }
public var errSecUserCanceled: OSStatus { -128 }
public var errSecAuthFailed: OSStatus { -25293 }
public var errSecInteractionNotAllowed: OSStatus { -25308 }
public var errSecMissingEntitlement: OSStatus { -34018 }
public var errSecParam: OSStatus { -50 }

// MARK: - Item attribute keys and values: each `let kSec…: CFString`. Swift does not check the concurrency safety of
// constants imported from C; `nonisolated(unsafe)` gives the same here.
// https://developer.apple.com/documentation/security/item-class-keys-and-values
nonisolated(unsafe) public let kSecClass: CFString = "class"
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"
// https://developer.apple.com/documentation/security/item-attribute-keys-and-values
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
nonisolated(unsafe) public let kSecAttrAccessControl: CFString = "accc"
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
nonisolated(unsafe) public let kSecAttrTokenID: CFString = "tkid"
nonisolated(unsafe) public let kSecAttrTokenIDSecureEnclave: CFString = "com.apple.setoken"
nonisolated(unsafe) public let kSecAttrIsPermanent: CFString = "perm"
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
nonisolated(unsafe) public let kSecPrivateKeyAttrs: CFString = "private"
// https://developer.apple.com/documentation/security/ksecattraccessible
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
// https://developer.apple.com/documentation/security/item-return-result-keys
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
// https://developer.apple.com/documentation/security/search-attribute-keys-and-values
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
// https://developer.apple.com/documentation/security/ksecusedataprotectionkeychain
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
// https://developer.apple.com/documentation/security/ksecuseauthenticationcontext
nonisolated(unsafe) public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"

// MARK: - Access control
// https://developer.apple.com/documentation/security/secaccesscontrol: `class SecAccessControl`
public final class SecAccessControl {}
// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags:
// `struct SecAccessControlCreateFlags: OptionSet, @unchecked Sendable`
public struct SecAccessControlCreateFlags: OptionSet, @unchecked Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
}
// https://developer.apple.com/documentation/security/secaccesscontrolcreatewithflags(_:_:_:_:)
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? {
    unavailable()
}

// MARK: - Keys
// https://developer.apple.com/documentation/security/seckey: `class SecKey`
public final class SecKey {}
// https://developer.apple.com/documentation/security/seckeyalgorithm:
// `struct SecKeyAlgorithm: Hashable, Equatable, RawRepresentable, @unchecked Sendable` (raw value CFString)
public struct SecKeyAlgorithm: Hashable, RawRepresentable, @unchecked Sendable {
    public let rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }
    // https://developer.apple.com/documentation/security/seckeyalgorithm/ecdsasignaturemessagex962sha256
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm(
        rawValue: "algid:sign:ECDSA:message-X962:SHA256")
}
// https://developer.apple.com/documentation/security/seckeycreaterandomkey(_:_:)
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> SecKey?
{
    unavailable()
}
// https://developer.apple.com/documentation/security/seckeycopypublickey(_:)
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    unavailable()
}
// https://developer.apple.com/documentation/security/seckeycopyexternalrepresentation(_:_:)
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?)
    -> CFData?
{
    unavailable()
}
// https://developer.apple.com/documentation/security/seckeycreatesignature(_:_:_:_:)
public func SecKeyCreateSignature(
    _ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    unavailable()
}
