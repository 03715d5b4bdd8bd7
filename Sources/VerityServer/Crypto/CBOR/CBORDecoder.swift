import Foundation

/// A strict, bounded CBOR decoder (RFC 8949) for what authenticators and Apple's App Attest send.
///
/// Definite lengths only; every length is checked against the bytes that are left before anything is read or
/// allocated; arrays and maps nest at most ``maximumDepth`` deep; inputs larger than ``maximumSize`` are refused
/// unread; a map with a duplicate key is refused; text must be UTF-8. Floats and tags are refused, WebAuthn's CBOR
/// has neither. Every failure is a ``CBORError``.
struct CBORDecoder: Sendable {
    /// The most bytes one input may have.
    var maximumSize: Int
    /// How deep arrays and maps may nest (the top-level item is depth 1).
    var maximumDepth: Int

    /// A decoder with caps that fit WebAuthn and App Attest objects, certificates included, with a wide margin.
    init(maximumSize: Int = 64 * 1024, maximumDepth: Int = 16) {
        self.maximumSize = maximumSize
        self.maximumDepth = maximumDepth
    }

    /// Decodes `input`, which must hold exactly one item.
    func decode(_ input: some DataProtocol) throws(CBORError) -> CBORValue {
        let (value, length) = try decodePrefix(input)
        guard length == input.count else { throw .trailingBytes }
        return value
    }

    /// Decodes the one item at the start of `input` and says how many bytes it took; what follows is the caller's
    /// (authenticator data carries a COSE key followed by more data).
    func decodePrefix(_ input: some DataProtocol) throws(CBORError) -> (value: CBORValue, length: Int) {
        guard input.count <= maximumSize else { throw .tooLarge }
        var reader = Reader(bytes: [UInt8](input), maximumDepth: maximumDepth)
        let value = try reader.item(depth: 1)
        return (value, reader.offset)
    }
}

extension CBORDecoder {
    /// A cursor over the input; each read checks the bytes left first.
    fileprivate struct Reader {
        let bytes: [UInt8]
        let maximumDepth: Int
        var offset = 0

        init(bytes: [UInt8], maximumDepth: Int) {
            self.bytes = bytes
            self.maximumDepth = maximumDepth
        }

        var remaining: Int { bytes.count - offset }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard remaining >= 1 else { throw .truncated }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
            guard count <= UInt64(remaining) else { throw .truncated }
            let end = offset + Int(count)
            defer { offset = end }
            return bytes[offset..<end]
        }

        /// The argument of a header: the value in the low five bits or in the 1, 2, 4 or 8 bytes after it.
        mutating func argument(_ information: UInt8) throws(CBORError) -> UInt64 {
            switch information {
            case 0..<24: return UInt64(information)
            case 24: return try bigEndian(1)
            case 25: return try bigEndian(2)
            case 26: return try bigEndian(4)
            case 27: return try bigEndian(8)
            case 31: throw .indefiniteLength
            default: throw .reservedAdditionalInformation
            }
        }

        mutating func bigEndian(_ count: Int) throws(CBORError) -> UInt64 {
            try take(UInt64(count)).reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            let initial = try byte()
            let major = initial >> 5
            let information = initial & 0x1F
            if major == 7 { return try simple(information) }
            let argument = try argument(information)
            switch major {
            case 0:
                return .unsigned(argument)
            case 1:
                return .negative(argument)
            case 2:
                return .bytes(Data(try take(argument)))
            case 3:
                guard let text = String(bytes: try take(argument), encoding: .utf8) else { throw .invalidUTF8 }
                return .text(text)
            case 4:
                guard depth < maximumDepth else { throw .tooDeep }
                // Every element takes at least one byte: a count beyond the bytes left is a lie, refused before any
                // allocation.
                guard argument <= UInt64(remaining) else { throw .truncated }
                var elements: [CBORValue] = []
                elements.reserveCapacity(Int(argument))
                for _ in 0..<argument { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                guard depth < maximumDepth else { throw .tooDeep }
                guard argument <= UInt64(remaining / 2) else { throw .truncated }
                var entries: [CBORValue: CBORValue] = [:]
                entries.reserveCapacity(Int(argument))
                for _ in 0..<argument {
                    let key = try item(depth: depth + 1)
                    let value = try item(depth: depth + 1)
                    guard entries.updateValue(value, forKey: key) == nil else { throw .duplicateMapKey }
                }
                return .map(entries)
            default:
                // Major type 6: tags. WebAuthn and App Attest use none.
                throw .unsupported
            }
        }

        mutating func simple(_ information: UInt8) throws(CBORError) -> CBORValue {
            switch information {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 31: throw .indefiniteLength
            case 28...30: throw .reservedAdditionalInformation
            default: throw .unsupported
            }
        }
    }
}
