/// Base64url, the URL- and filename-safe Base64 alphabet of RFC 4648 §5, as used by JOSE (RFC 7515 §2).
///
/// ``encode(_:)`` never writes `=` padding. ``decode(_:)`` accepts input with or without padding, but rejects
/// characters outside the alphabet (including `+`, `/` and whitespace), impossible lengths, padding anywhere but at
/// the end, and non-zero unused bits in the last character, so that every byte sequence has exactly one accepted
/// unpadded encoding.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    /// Encodes `bytes` as unpadded base64url.
    ///
    /// - Parameter bytes: The bytes to encode.
    /// - Returns: The base64url text, without `=` padding; empty for empty input.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
            output.append(alphabet[Int(chunk & 0x3F)])
            index += 3
        }
        switch input.count - index {
        case 1:
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 0x3F)])
            output.append(alphabet[Int(chunk >> 12 & 0x3F)])
            output.append(alphabet[Int(chunk >> 6 & 0x3F)])
        default:
            break
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url text, with or without trailing `=` padding.
    ///
    /// - Parameter string: The base64url text.
    /// - Returns: The decoded bytes, or `nil` if `string` contains a character outside the base64url alphabet, has
    ///   an impossible length, misplaced or excess padding, or non-zero unused trailing bits.
    public static func decode(_ string: String) -> [UInt8]? {
        var characters = Array(string.utf8)
        if characters.last == UInt8(ascii: "=") {
            // Padding, when present, must complete the last quantum exactly.
            guard characters.count % 4 == 0 else { return nil }
            var padding = 0
            while characters.last == UInt8(ascii: "=") {
                characters.removeLast()
                padding += 1
            }
            guard padding <= 2 else { return nil }
        }
        let remainder = characters.count % 4
        guard remainder != 1 else { return nil }

        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = reverse[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // The unused low bits of the last character must be zero (canonical encoding).
        guard accumulator == 0 else { return nil }
        return output
    }
}
