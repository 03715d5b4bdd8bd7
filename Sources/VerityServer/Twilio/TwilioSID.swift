import Foundation
import VerityCore

/// Twilio resource identifiers (SIDs): a two-letter type prefix and 32 lowercase hex digits, 34 characters.
///
/// Verity's own ids carry 128 random bits in 26 base32 characters (`prj_…`, `key_…`, `ver_…`), exactly what 32 hex
/// digits hold, so accounts, API keys and verifications map to SIDs and back without storing anything.
public enum TwilioSID {
    /// The account SID (`AC…`) a project answers to on the Twilio face.
    public static func account(forProject projectId: String) -> String? {
        sid("AC", verityId: projectId)
    }

    /// The API key SID (`SK…`) a Verity API key answers to on the Twilio face.
    public static func apiKey(forKey keyId: String) -> String? {
        sid("SK", verityId: keyId)
    }

    /// The SID of the resource a Verity id names (`VE…` for `ver_…`); nil when the id carries no 128-bit value.
    static func sid(_ prefix: String, verityId: String) -> String? {
        guard let separator = verityId.firstIndex(of: "_"),
            let bytes = base32Decode(verityId[verityId.index(after: separator)...])
        else { return nil }
        return prefix + Hex.encode(bytes)
    }

    /// The Verity id a SID names (`ver_…` for `VE…`); nil unless `sid` is a well-formed SID of that type.
    static func verityId(_ sid: String, prefix: String, idPrefix: String) -> String? {
        guard isValid(sid, prefix: prefix) else { return nil }
        var bytes: [UInt8] = []
        var digits = sid.dropFirst(2).makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let value = UInt8(String([high, low]), radix: 16) else { return nil }
            bytes.append(value)
        }
        return "\(idPrefix)_\(Identifiers.base32(bytes))"
    }

    /// Whether `sid` has the shape of a SID of this type (hex digits of either case, as Twilio's spec allows).
    static func isValid(_ sid: String, prefix: String) -> Bool {
        sid.count == 34 && sid.hasPrefix(prefix) && sid.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    /// A new random SID, for resources only the Twilio face has (services).
    static func make(_ prefix: String, random: any RandomSource) -> String {
        prefix + Hex.encode(random.bytes(count: 16))
    }

    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")

    /// The 16 bytes of a 26-character id body, or nil when it is not the canonical base32 of 16 bytes.
    private static func base32Decode(_ text: Substring) -> [UInt8]? {
        guard text.count == 26 else { return nil }
        var bytes: [UInt8] = []
        var buffer = 0
        var bits = 0
        for character in text {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
                buffer &= (1 << bits) - 1
            }
        }
        // 26 characters hold 130 bits: the last two must be the zero padding the encoder writes.
        guard bytes.count == 16, buffer == 0 else { return nil }
        return bytes
    }
}
