import Foundation

/// The shape of Verity identifiers, checked before one goes into a URL path.
enum Identifier {
    static let factorPrefix = "fac_"
    static let challengePrefix = "chl_"

    /// Whether `value` starts with `prefix` and is otherwise 1 to 128 ASCII letters, digits, `_` or `-`.
    static func isValid(_ value: String, prefix: String) -> Bool {
        guard value.hasPrefix(prefix), value.utf8.count > prefix.utf8.count, value.utf8.count <= 128 else {
            return false
        }
        return value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }
    }
}
