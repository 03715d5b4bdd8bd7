import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238), built on HOTP (RFC 4226), as used by authenticator apps.
///
/// The moving factor is the number of whole ``period``s since the Unix epoch; the code is the HOTP dynamic
/// truncation of `HMAC(secret, counter as 8-byte big-endian)`, reduced modulo 10^``digits`` and zero-padded.
public struct TOTP: Sendable, Equatable {
    /// The HMAC hash function.
    public enum Algorithm: String, WireEnum, Sendable {
        /// HMAC-SHA-1, the RFC 4226 default and the only one every authenticator app supports.
        case sha1 = "SHA1"
        /// HMAC-SHA-256.
        case sha256 = "SHA256"
        /// HMAC-SHA-512.
        case sha512 = "SHA512"
    }

    /// The shortest secret accepted, in bytes (128 bits, RFC 4226 §4 requirement R6).
    public static let minimumSecretLength = 16
    /// The accepted code lengths.
    public static let allowedDigits = 6...8
    /// The accepted time steps, in seconds.
    public static let allowedPeriods = 1...3600

    /// The shared secret key.
    public let secret: [UInt8]
    /// The HMAC hash function.
    public let algorithm: Algorithm
    /// The number of digits in a code, 6 to 8.
    public let digits: Int
    /// The time step, in seconds.
    public let period: Int

    /// Creates a TOTP generator and verifier.
    ///
    /// - Parameters:
    ///   - secret: The shared secret, at least ``minimumSecretLength`` bytes.
    ///   - algorithm: The HMAC hash function; SHA-1 by default.
    ///   - digits: The code length, in ``allowedDigits``; 6 by default.
    ///   - period: The time step in seconds, in ``allowedPeriods``; 30 by default.
    /// - Throws: ``TOTPError`` naming the invalid parameter.
    public init(secret: [UInt8], algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30) throws(TOTPError) {
        guard secret.count >= Self.minimumSecretLength else { throw .secretTooShort }
        guard Self.allowedDigits.contains(digits) else { throw .invalidDigits }
        guard Self.allowedPeriods.contains(period) else { throw .invalidPeriod }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
    }

    /// The time-step counter at `date`: whole periods since 1970-01-01T00:00:00Z, 0 before the epoch.
    ///
    /// - Parameter date: The moment.
    /// - Returns: `floor(seconds since epoch / period)`.
    public func counter(at date: Date) -> UInt64 {
        let steps = (date.timeIntervalSince1970 / Double(period)).rounded(.down)
        guard steps > 0 else { return 0 }
        guard steps < 0x1p64 else { return .max }
        return UInt64(steps)
    }

    /// The HOTP code for `counter` (RFC 4226 §5.3), zero-padded to ``digits`` digits.
    ///
    /// - Parameter counter: The moving factor.
    /// - Returns: The code, exactly ``digits`` ASCII digits.
    public func code(counter: UInt64) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8] =
            switch algorithm {
            case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            }
        // Dynamic truncation: the low nibble of the last byte picks 4 bytes, whose top bit is cleared.
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary =
            UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The code for the time step containing `date`.
    ///
    /// - Parameter date: The moment.
    /// - Returns: `code(counter: counter(at: date))`.
    public func code(at date: Date) -> String {
        code(counter: counter(at: date))
    }

    /// The counter whose code matches within ±window steps, checked in constant time per candidate, or nil.
    ///
    /// Every candidate in the window is computed and compared in full, with no early exit, so the time taken does not
    /// reveal which step (if any) matched. When more than one step matches, the one nearest `date` wins, the earlier
    /// one on a tie. A server should store the returned counter and refuse codes for that counter or earlier ones, to
    /// stop replays (RFC 6238 §5.2).
    ///
    /// - Parameters:
    ///   - code: The code the user typed; must be exactly ``digits`` ASCII digits (no spaces).
    ///   - date: The moment of verification.
    ///   - window: How many steps before and after the current one to accept; negative values count as 0.
    /// - Returns: The matching counter, or `nil` if `code` is malformed or matches no step in the window.
    public func matchingCounter(for code: String, at date: Date, window: Int = 1) -> UInt64? {
        let candidate = Array(code.utf8)
        guard candidate.count == digits,
            candidate.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        let current = counter(at: date)
        let window = UInt64(max(0, window))
        var match: UInt64?
        // Nearest first: 0, -1, +1, -2, +2, …
        var distance: UInt64 = 0
        while distance <= window {
            for isAhead in distance == 0 ? [false] : [false, true] {
                let (step, overflow) =
                    isAhead ? current.addingReportingOverflow(distance) : current.subtractingReportingOverflow(distance)
                guard !overflow else { continue }
                let expected = Array(self.code(counter: step).utf8)
                if Self.constantTimeEqual(expected, candidate), match == nil {
                    match = step
                }
            }
            distance += 1
        }
        return match
    }

    /// An `otpauth://` provisioning URI for authenticator apps (the Key Uri Format), to show as a QR code.
    ///
    /// The form is `otpauth://totp/ISSUER:ACCOUNT?secret=BASE32&issuer=ISSUER&algorithm=SHA1&digits=6&period=30`,
    /// where the issuer and account are percent-encoded UTF-8 (everything but `A`–`Z`, `a`–`z`, `0`–`9`, `-`, `.`,
    /// `_` and `~` is escaped, so a space becomes `%20` and a colon `%3A`) and the secret is unpadded base32.
    ///
    /// - Parameters:
    ///   - issuer: The service name shown in the app, for example `"Verity"`.
    ///   - account: The user's account name, for example an email address.
    /// - Returns: The URI.
    public func uri(issuer: String, account: String) -> String {
        let encodedIssuer = PercentEncoding.encode(issuer)
        return "otpauth://totp/\(encodedIssuer):\(PercentEncoding.encode(account))"
            + "?secret=\(Base32.encode(secret))&issuer=\(encodedIssuer)"
            + "&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)"
    }

    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }
}
