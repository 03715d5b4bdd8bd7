import Crypto
import Foundation

/// Signs and verifies the bodies of the webhooks Verity sends.
///
/// The scheme follows Stripe's. Each request carries one header:
///
/// ```
/// Verity-Signature: t=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
/// ```
///
/// - `t` is the time of signing, in whole seconds since 1970-01-01T00:00:00Z.
/// - `v1` is the lowercase hex HMAC-SHA256, keyed with the UTF-8 bytes of the shared secret, of the signed payload:
///   the decimal `t`, one `.` (0x2E), then the raw request body bytes exactly as sent.
///
/// A receiver recomputes the HMAC over the body it received, compares it in constant time, and rejects the request
/// when `t` lies further than its tolerance (five minutes by default) from its own clock, so a captured request
/// cannot be replayed later. Elements are separated by `,`; a receiver ignores elements it does not know, and
/// accepts the request when any `v1` element matches (so a sender may sign with an old and a new secret while
/// the secret is rotated).
public enum WebhookSignature {
    /// The name of the HTTP header that carries the signature.
    public static let headerName = "Verity-Signature"

    /// The scheme tag of the HMAC-SHA256 signature.
    static let scheme = "v1"

    /// Builds the value of the `Verity-Signature` header for one request body.
    ///
    /// - Parameters:
    ///   - secret: The secret shared with the receiver.
    ///   - timestamp: The time of signing, in seconds since 1970.
    ///   - body: The raw request body bytes, exactly as they will be sent.
    /// - Returns: `t=<timestamp>,v1=<lowercase hex HMAC-SHA256>`.
    public static func header(secret: String, timestamp: Int, body: some Sequence<UInt8>) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: signedPayload(timestamp: timestamp, body: body),
            using: key(secret)
        )
        return "t=\(timestamp),\(scheme)=\(hex(mac))"
    }

    /// Checks a `Verity-Signature` header against a received body.
    ///
    /// The HMAC is compared in constant time. The check fails when the header is malformed, has no `t` or no `v1`
    /// element, when no `v1` element matches, or when `t` differs from `now` by more than `tolerance`.
    ///
    /// - Parameters:
    ///   - header: The received header value.
    ///   - secret: The secret shared with the sender.
    ///   - body: The raw request body bytes, exactly as received.
    ///   - now: The receiver's current time.
    ///   - tolerance: How far, in seconds, `t` may lie from `now`, in either direction.
    /// - Returns: Whether the body was signed with `secret` within the tolerance.
    public static func verify(
        header: String,
        secret: String,
        body: some Sequence<UInt8>,
        now: Date,
        tolerance: TimeInterval = 300
    ) -> Bool {
        var timestamp: Int?
        var signatures: [[UInt8]] = []
        for element in header.split(separator: ",") {
            let parts = element.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return false }
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            switch name {
            case "t":
                guard timestamp == nil, let seconds = Int(value) else { return false }
                timestamp = seconds
            case scheme:
                // A value that is not hex can never match; skip it rather than fail the header.
                if let bytes = unhex(value) { signatures.append(bytes) }
            default:
                continue
            }
        }
        guard let timestamp, !signatures.isEmpty else { return false }
        guard abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= tolerance else { return false }

        let payload = signedPayload(timestamp: timestamp, body: body)
        let key = key(secret)
        return signatures.contains { signature in
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: payload, using: key)
        }
    }

    private static func key(_ secret: String) -> SymmetricKey {
        SymmetricKey(data: Array(secret.utf8))
    }

    private static func signedPayload(timestamp: Int, body: some Sequence<UInt8>) -> [UInt8] {
        var payload = Array("\(timestamp).".utf8)
        payload.append(contentsOf: body)
        return payload
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex of either case; `nil` for an odd length or a non-hex character.
    private static func unhex(_ string: String) -> [UInt8]? {
        let chars = Array(string.utf8)
        guard chars.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
