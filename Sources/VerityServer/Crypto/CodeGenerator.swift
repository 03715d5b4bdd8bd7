import Crypto
import Foundation
import VerityCore

/// One-time codes.
///
/// A code is never stored. Each verification stores a random salt; the code is the HMAC-SHA256 of the
/// verification id and that salt under a key derived from the master key, reduced to decimal digits. The server
/// can therefore re-send the same code and check a candidate, while a copy of the database alone reveals
/// nothing about any code.
struct CodeGenerator: Sendable {
    private let key: SymmetricKey

    init(masterKey: MasterKey) {
        key = masterKey.derived(for: "one-time-code")
    }

    func code(verificationId: String, salt: String, length: Int) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(verificationId).\(salt)".utf8), using: key)
        // 64 bits reduced modulo 10^length (at most 10^10): the bias is below 2^-30, far under guessing odds.
        let value = Array(mac).prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        var modulus: UInt64 = 1
        for _ in 0..<length { modulus *= 10 }
        let digits = String(value % modulus)
        return String(repeating: "0", count: length - digits.count) + digits
    }

    /// Compares a candidate with the expected code in time independent of where they differ.
    func matches(_ candidate: String, verificationId: String, salt: String, length: Int) -> Bool {
        Self.constantTimeEquals(candidate, code(verificationId: verificationId, salt: salt, length: length))
    }

    /// The secret half of an instant link: 128 bits of an HMAC of the verification, under its own label so it never
    /// equals a code's HMAC. Like a code it is derived, never stored.
    func linkSecret(verificationId: String, salt: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data("link.\(verificationId).\(salt)".utf8), using: key)
        return Base64URL.encode(Array(Array(mac).prefix(16)))
    }

    /// Whether two codes are equal, in time independent of where they differ.
    static func constantTimeEquals(_ candidate: String, _ expected: String) -> Bool {
        let expected = Array(expected.utf8)
        let given = Array(candidate.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
