import Foundation
import Hummingbird
import NIOCore
import VerityCore

/// A value Twilio always sends, as `null` when absent (a Swift optional would leave the key out).
struct Nullable<Wrapped: Encodable & Sendable>: Encodable, Sendable {
    var value: Wrapped?

    init(_ value: Wrapped?) {
        self.value = value
    }

    static var null: Nullable { Nullable(nil) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}
