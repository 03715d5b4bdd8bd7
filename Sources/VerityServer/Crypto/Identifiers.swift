import Foundation

/// Random identifiers and secrets in a URL-safe alphabet.
struct Identifiers: Sendable {
    let random: any RandomSource

    /// Crockford-style base32, lowercase: no padding, nothing to escape in URLs or logs.
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")

    /// `prefix_` + 26 characters (128 random bits).
    func make(_ prefix: String) -> String {
        "\(prefix)_\(Self.base32(random.bytes(count: 16)))"
    }

    /// A random string carrying `bytes` bytes of entropy.
    func secret(bytes: Int) -> String {
        Self.base32(random.bytes(count: bytes))
    }

    static func base32(_ bytes: [UInt8]) -> String {
        var output = ""
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 {
            output.append(alphabet[(buffer << (5 - bits)) & 31])
        }
        return output
    }
}
