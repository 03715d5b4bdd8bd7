/// Base32 with the RFC 4648 §6 alphabet (`A`–`Z`, `2`–`7`), the encoding of TOTP secrets in `otpauth://` URIs.
///
/// ``encode(_:)`` writes upper case without `=` padding. ``decode(_:)`` is forgiving of how people copy secrets:
/// it is case-insensitive and ignores spaces anywhere and `=` padding at the end, but rejects any other character,
/// `=` followed by data, and lengths that no byte sequence encodes to. Unused trailing bits are ignored.
public enum Base32 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(index)
            // Lower-case letters decode like upper case.
            if character >= UInt8(ascii: "A") && character <= UInt8(ascii: "Z") {
                table[Int(character + 32)] = UInt8(index)
            }
        }
        return table
    }()

    /// Encodes `bytes` as upper-case base32 without padding.
    ///
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The base32 text; empty for empty input.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(accumulator >> UInt32(bits) & 0x1F)])
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 {
            output.append(alphabet[Int(accumulator << UInt32(5 - bits) & 0x1F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base32 text.
    ///
    /// - Parameter string: The base32 text, in any case, optionally with spaces and trailing `=` padding.
    /// - Returns: The decoded bytes, or `nil` if `string` contains any other character, data after padding, or has a
    ///   length (ignoring spaces and padding) that leaves 1, 3 or 6 characters in the last group of 8.
    public static func decode(_ string: String) -> [UInt8]? {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        var count = 0
        var seenPadding = false
        for character in string.utf8 {
            if character == UInt8(ascii: " ") { continue }
            if character == UInt8(ascii: "=") {
                seenPadding = true
                continue
            }
            guard !seenPadding else { return nil }
            let value = reverse[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 5 | UInt32(value)
            bits += 5
            count += 1
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        switch count % 8 {
        case 1, 3, 6: return nil
        default: return output
        }
    }
}
