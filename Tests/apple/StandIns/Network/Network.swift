// A stand-in for Apple's Network framework, for type-checking VerityKit's Apple-only code on Linux. It never ships
// and never runs. Each declaration is transcribed from the Swift declaration Apple's documentation shows
// (developer.apple.com/documentation/network/<symbol>), named above it; only what VerityKit uses is here, so an enum
// may list fewer cases than Apple's (none is switched over exhaustively). `NWConnection` and `NWParameters` are
// `@unchecked Sendable` classes in Apple's SDK, and so are these; the handlers they take are `@Sendable`.
import Dispatch
import Foundation

// https://developer.apple.com/documentation/network/nwerror: `enum NWError`, `Error, CustomDebugStringConvertible,
// Equatable` (and `Sendable`), with `case posix(POSIXErrorCode)`, `case dns(DNSServiceErrorType)` and
// `case tls(OSStatus)`; DNSServiceErrorType and OSStatus are both `Int32`.
public enum NWError: Error, CustomDebugStringConvertible, Equatable, Sendable {
    case posix(POSIXErrorCode)
    case dns(Int32)
    case tls(Int32)
    public var debugDescription: String { fatalError("Network stand-in: type-checking only") }
}

// https://developer.apple.com/documentation/network/nwinterface: `struct NWInterface`, with
// https://developer.apple.com/documentation/network/nwinterface/interfacetype: `enum InterfaceType` (`Hashable`,
// `Sendable`): `other`, `wifi`, `cellular`, `wiredEthernet`, `loopback`
public struct NWInterface: Hashable, Sendable {
    public enum InterfaceType: Hashable, Sendable {
        case other
        case wifi
        case cellular
        case wiredEthernet
        case loopback
    }
}

// https://developer.apple.com/documentation/network/nwendpoint: `enum NWEndpoint`
public enum NWEndpoint: Hashable, Sendable {
    // https://developer.apple.com/documentation/network/nwendpoint/host-swift.enum: `enum Host` with
    // `case name(String, NWInterface?)` and https://developer.apple.com/documentation/network/nwendpoint/host-swift.enum/init(_:):
    // `init(_ string: String)`
    public enum Host: Hashable, Sendable {
        case name(String, NWInterface?)
        public init(_ string: String) { self = .name(string, nil) }
    }

    // https://developer.apple.com/documentation/network/nwendpoint/port-swift.struct: `struct Port`, with
    // https://developer.apple.com/documentation/network/nwendpoint/port-swift.struct/init(rawvalue:):
    // `init?(rawValue: UInt16)`
    public struct Port: Hashable, Sendable, RawRepresentable {
        public let rawValue: UInt16
        public init?(rawValue: UInt16) { self.rawValue = rawValue }
    }

    case hostPort(host: NWEndpoint.Host, port: NWEndpoint.Port)
}

// https://developer.apple.com/documentation/network/nwprotocoloptions: `class NWProtocolOptions`
open class NWProtocolOptions: @unchecked Sendable {}

// https://developer.apple.com/documentation/network/nwprotocoltls: `class NWProtocolTLS`, with
// https://developer.apple.com/documentation/network/nwprotocoltls/options: `class Options` and its `init()`
open class NWProtocolTLS {
    open class Options: NWProtocolOptions, @unchecked Sendable {
        override public init() {}
    }
}

// https://developer.apple.com/documentation/network/nwprotocoltcp: `class NWProtocolTCP`, with
// https://developer.apple.com/documentation/network/nwprotocoltcp/options: `class Options` and its `init()`
open class NWProtocolTCP {
    open class Options: NWProtocolOptions, @unchecked Sendable {
        override public init() {}
    }
}

// https://developer.apple.com/documentation/network/nwparameters: `final class NWParameters`, `@unchecked Sendable`
public final class NWParameters: @unchecked Sendable {
    // https://developer.apple.com/documentation/network/nwparameters/init(tls:tcp:):
    // `convenience init(tls: NWProtocolTLS.Options?, tcp: NWProtocolTCP.Options = NWProtocolTCP.Options())`
    public init(tls: NWProtocolTLS.Options?, tcp: NWProtocolTCP.Options = NWProtocolTCP.Options()) {}

    // https://developer.apple.com/documentation/network/nwparameters/requiredinterfacetype:
    // `final var requiredInterfaceType: NWInterface.InterfaceType { get set }`
    public final var requiredInterfaceType: NWInterface.InterfaceType {
        get { fatalError("Network stand-in: type-checking only") }
        set { fatalError("Network stand-in: type-checking only") }
    }
}

// https://developer.apple.com/documentation/network/nwconnection: `final class NWConnection`, `@unchecked Sendable`
public final class NWConnection: @unchecked Sendable {
    // https://developer.apple.com/documentation/network/nwconnection/state-swift.enum: `enum State` (`Equatable`,
    // `Sendable`)
    public enum State: Equatable, Sendable {
        case setup
        case waiting(NWError)
        case preparing
        case ready
        case failed(NWError)
        case cancelled
    }

    // https://developer.apple.com/documentation/network/nwconnection/contentcontext: `final class ContentContext`,
    // with https://developer.apple.com/documentation/network/nwconnection/contentcontext/defaultmessage:
    // `static let defaultMessage: NWConnection.ContentContext`
    public final class ContentContext: @unchecked Sendable {
        public static var defaultMessage: NWConnection.ContentContext {
            fatalError("Network stand-in: type-checking only")
        }
    }

    // https://developer.apple.com/documentation/network/nwconnection/sendcompletion: `enum SendCompletion` with
    // `case contentProcessed(@Sendable (NWError?) -> Void)` and `case idempotent`
    public enum SendCompletion {
        case contentProcessed(@Sendable (NWError?) -> Void)
        case idempotent
    }

    // https://developer.apple.com/documentation/network/nwconnection/init(host:port:using:):
    // `convenience init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters)`
    public init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters) {}

    // https://developer.apple.com/documentation/network/nwconnection/stateupdatehandler:
    // `@preconcurrency final var stateUpdateHandler: (@Sendable (NWConnection.State) -> Void)? { get set }`
    @preconcurrency public final var stateUpdateHandler: (@Sendable (NWConnection.State) -> Void)? {
        get { fatalError("Network stand-in: type-checking only") }
        set { fatalError("Network stand-in: type-checking only") }
    }

    // https://developer.apple.com/documentation/network/nwconnection/start(queue:): `final func start(queue:
    // DispatchQueue)`
    public final func start(queue: DispatchQueue) {
        fatalError("Network stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/network/nwconnection/cancel(): `final func cancel()`
    public final func cancel() {
        fatalError("Network stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/network/nwconnection/send(content:contentcontext:iscomplete:completion:):
    // `@preconcurrency final func send(content: Data?, contentContext: NWConnection.ContentContext = .defaultMessage,
    // isComplete: Bool = true, completion: NWConnection.SendCompletion)`
    @preconcurrency public final func send(
        content: Data?, contentContext: NWConnection.ContentContext = .defaultMessage, isComplete: Bool = true,
        completion: NWConnection.SendCompletion
    ) {
        fatalError("Network stand-in: type-checking only")
    }

    // https://developer.apple.com/documentation/network/nwconnection/receive(minimumincompletelength:maximumlength:completion:):
    // `@preconcurrency final func receive(minimumIncompleteLength: Int, maximumLength: Int, completion: @escaping
    // @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void)`
    @preconcurrency public final func receive(
        minimumIncompleteLength: Int, maximumLength: Int,
        completion: @escaping @Sendable (Data?, NWConnection.ContentContext?, Bool, NWError?) -> Void
    ) {
        fatalError("Network stand-in: type-checking only")
    }
}
