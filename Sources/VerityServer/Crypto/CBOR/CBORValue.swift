import Foundation

/// One decoded CBOR data item (RFC 8949), as far as WebAuthn and App Attest use CBOR: integers, byte and text strings,
/// arrays, maps and the simple values `false`, `true`, `null` and `undefined`. Floats and tags are never produced:
/// ``CBORDecoder`` refuses them.
enum CBORValue: Sendable, Hashable {
    /// A non-negative integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer (major type 1), stored as CBOR does: the value is `-1 - n`.
    case negative(UInt64)
    /// A byte string (major type 2).
    case bytes(Data)
    /// A UTF-8 text string (major type 3).
    case text(String)
    /// An array (major type 4).
    case array([CBORValue])
    /// A map (major type 5); its keys are unique, the decoder refuses duplicates.
    case map([CBORValue: CBORValue])
    /// `false` or `true` (simple values 20 and 21).
    case bool(Bool)
    /// `null` (simple value 22).
    case null
    /// `undefined` (simple value 23).
    case undefined

    /// The integer, when this is an integer that fits an `Int`.
    var int: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }

    /// The bytes, when this is a byte string.
    var bytes: Data? {
        if case .bytes(let value) = self { value } else { nil }
    }

    /// The string, when this is a text string.
    var text: String? {
        if case .text(let value) = self { value } else { nil }
    }

    /// The elements, when this is an array.
    var array: [CBORValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The entries, when this is a map.
    var map: [CBORValue: CBORValue]? {
        if case .map(let value) = self { value } else { nil }
    }

    /// The value under an integer key, when this is a map that has it (COSE keys use integer labels).
    subscript(key: Int) -> CBORValue? {
        map?[CBORValue(key)]
    }

    /// The value under a text key, when this is a map that has it (attestation objects use text keys).
    subscript(key: String) -> CBORValue? {
        map?[.text(key)]
    }

    /// The CBOR integer for `value`.
    init(_ value: Int) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }
}
