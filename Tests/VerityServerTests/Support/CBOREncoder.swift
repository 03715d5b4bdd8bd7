import Foundation

@testable import VerityServer

/// Encodes CBOR for tests (the server only decodes): deterministic, with map keys sorted by their encoding as CTAP2's
/// canonical form asks, so an authenticator written from the spec produces what real ones do.
enum CBOREncoder {
    static func encode(_ value: CBORValue) -> Data {
        var out = Data()
        append(value, to: &out)
        return out
    }

    /// The header of an item of major type `major` whose argument is `argument`, in the shortest form.
    static func header(_ major: UInt8, _ argument: UInt64) -> Data {
        let type = major << 5
        switch argument {
        case 0..<24: return Data([type | UInt8(argument)])
        case 24...0xFF: return Data([type | 24, UInt8(argument)])
        case 0x100...0xFFFF: return Data([type | 25]) + bigEndian(argument, 2)
        case 0x1_0000...0xFFFF_FFFF: return Data([type | 26]) + bigEndian(argument, 4)
        default: return Data([type | 27]) + bigEndian(argument, 8)
        }
    }

    private static func bigEndian(_ value: UInt64, _ count: Int) -> Data {
        Data((0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
    }

    private static func append(_ value: CBORValue, to out: inout Data) {
        switch value {
        case .unsigned(let n): out += header(0, n)
        case .negative(let n): out += header(1, n)
        case .bytes(let bytes): out += header(2, UInt64(bytes.count)) + bytes
        case .text(let text): out += header(3, UInt64(text.utf8.count)) + Data(text.utf8)
        case .array(let elements):
            out += header(4, UInt64(elements.count))
            for element in elements { append(element, to: &out) }
        case .map(let entries):
            out += header(5, UInt64(entries.count))
            let encoded = entries.map { (key: encode($0.key), value: encode($0.value)) }
            for entry in encoded.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                out += entry.key + entry.value
            }
        case .bool(let flag): out += Data([flag ? 0xF5 : 0xF4])
        case .null: out += Data([0xF6])
        case .undefined: out += Data([0xF7])
        }
    }
}
