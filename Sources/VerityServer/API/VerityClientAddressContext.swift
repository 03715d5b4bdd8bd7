import Foundation
import HTTPTypes
import Hummingbird

/// A request context that carries the client's address.
protocol VerityClientAddressContext: RequestContext {
    var clientAddress: String? { get set }
}
