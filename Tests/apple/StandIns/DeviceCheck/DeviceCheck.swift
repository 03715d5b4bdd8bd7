// A stand-in for Apple's DeviceCheck framework (App Attest), for type-checking VerityKit's Apple-only code on Linux.
// It never ships and never runs. Each declaration is transcribed from the Swift declaration Apple's documentation
// shows (developer.apple.com/documentation/devicecheck/<symbol>), named above it. `DCAppAttestService` is an
// Objective-C class that is neither `Sendable` nor isolated to an actor, and so is this one; its completion-handler
// methods are imported with `async` variants, declared here beside them.
import Foundation

// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct: `struct DCError`, an imported NSError
// code struct (`CustomNSError, Hashable, Error`), with
// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code: `enum Code` (`@objc enum
// DCErrorCode: Int`, imported `@unchecked Sendable`)
public struct DCError: CustomNSError, Hashable, Error {
    public enum Code: Int, @unchecked Sendable {
        case unknownSystemFailure = 0
        case featureUnsupported = 1
        case invalidInput = 2
        case invalidKey = 3
        case serverUnavailable = 4
    }
    public let code: Code
    public init(_ code: Code) { self.code = code }
    public static var errorDomain: String { "com.apple.devicecheck.error" }
    public var errorCode: Int { code.rawValue }
}

// https://developer.apple.com/documentation/devicecheck/dcappattestservice: `class DCAppAttestService`
open class DCAppAttestService: NSObject {
    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/shared:
    // `class var shared: DCAppAttestService { get }`
    open class var shared: DCAppAttestService {
        fatalError("DeviceCheck stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/issupported:
    // `var isSupported: Bool { get }`
    open var isSupported: Bool {
        fatalError("DeviceCheck stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:):
    // `func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void)`, and its `async`
    // variant `func generateKey() async throws -> String`
    open func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void) {
        fatalError("DeviceCheck stand-in: type-checking only")
    }
    open func generateKey() async throws -> String {
        fatalError("DeviceCheck stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:):
    // `func attestKey(_ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?,
    // (any Error)?) -> Void)`, and its `async` variant
    open func attestKey(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) {
        fatalError("DeviceCheck stand-in: type-checking only")
    }
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        fatalError("DeviceCheck stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:):
    // `func generateAssertion(_ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?,
    // (any Error)?) -> Void)`, and its `async` variant
    open func generateAssertion(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) {
        fatalError("DeviceCheck stand-in: type-checking only")
    }
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        fatalError("DeviceCheck stand-in: type-checking only")
    }
}
