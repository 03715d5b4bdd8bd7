// A stand-in for Apple's LocalAuthentication framework, for type-checking VerityKit's Apple-only code on Linux. It
// never ships and never runs. Each declaration is transcribed from the Swift declaration Apple's documentation shows
// (developer.apple.com/documentation/localauthentication/<symbol>), named above it. `LAContext` is an Objective-C class
// that is neither `Sendable` nor isolated to an actor, and so is this one.
import Foundation

// https://developer.apple.com/documentation/foundation/nserrorpointer is
// `AutoreleasingUnsafeMutablePointer<NSError?>?`, which Swift has only with Objective-C; an `&error` argument converts
// to this pointer the same way.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

// https://developer.apple.com/documentation/localauthentication/lapolicy: `enum LAPolicy: Int, @unchecked Sendable`
public enum LAPolicy: Int, @unchecked Sendable {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
}

// https://developer.apple.com/documentation/localauthentication/labiometrytype: `enum LABiometryType: Int,
// @unchecked Sendable` (`opticID` since iOS 17)
public enum LABiometryType: Int, @unchecked Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
    case opticID = 4
}

// https://developer.apple.com/documentation/localauthentication/laerror: `struct LAError: CustomNSError, Hashable,
// Error` with `enum Code: Int, @unchecked Sendable`
public struct LAError: CustomNSError, Hashable, Error {
    // https://developer.apple.com/documentation/localauthentication/laerror/code
    public enum Code: Int, @unchecked Sendable {
        case authenticationFailed = -1
        case userCancel = -2
        case userFallback = -3
        case systemCancel = -4
        case passcodeNotSet = -5
        case appCancel = -9
        case invalidContext = -10
        case biometryNotAvailable = -6
        case biometryNotEnrolled = -7
        case biometryLockout = -8
        case notInteractive = -1004
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
    public static var errorDomain: String { "com.apple.LocalAuthentication" }
    public var errorCode: Int { code.rawValue }
}

// https://developer.apple.com/documentation/localauthentication/lacontext: `class LAContext: NSObject`
open class LAContext: NSObject {
    override public init() { super.init() }

    // https://developer.apple.com/documentation/localauthentication/lacontext/canevaluatepolicy(_:error:)
    open func canEvaluatePolicy(_ policy: LAPolicy, error: NSErrorPointer) -> Bool {
        fatalError("LocalAuthentication stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/localauthentication/lacontext/evaluatepolicy(_:localizedreason:reply:)
    // imported with its `async` variant: `func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async
    // throws -> Bool`
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        fatalError("LocalAuthentication stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/localauthentication/lacontext/biometrytype: `var biometryType:
    // LABiometryType { get }`
    open var biometryType: LABiometryType {
        fatalError("LocalAuthentication stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/localauthentication/lacontext/interactionnotallowed
    open var interactionNotAllowed = false

    // https://developer.apple.com/documentation/localauthentication/lacontext/localizedfallbacktitle
    open var localizedFallbackTitle: String?
}
