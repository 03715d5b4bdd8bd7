import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// A reply that does not follow RFC 5321's grammar.
struct SMTPProtocolError: Error, Sendable, Equatable {
    var detail: String
}
