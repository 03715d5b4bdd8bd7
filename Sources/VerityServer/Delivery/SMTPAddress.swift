import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import VerityCore

/// Checks and takes apart the addresses that go into the envelope and headers.
enum SMTPAddress {
    /// Characters that would close the `<…>` path, start another header field or need quoting.
    private static let forbidden = Set("<>()[]\\,;:\"@".utf8)

    /// Whether `address` is a plain `local@domain` mailbox of printable ASCII, safe to put verbatim into
    /// `RCPT TO:<…>` and a header. Anything else (spaces, CR/LF, quoting, non-ASCII) is refused rather than
    /// escaped, which also rules out command and header injection.
    static func isValid(_ address: String) -> Bool {
        let bytes = Array(address.utf8)
        guard bytes.count <= 254, let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard !local.isEmpty, local.count <= 64, !domain.isEmpty else { return false }
        return (local + domain).allSatisfy { $0 > 0x20 && $0 < 0x7F && !forbidden.contains($0) }
    }

    /// The part after the `@`: the only piece of an address that may be logged.
    static func domain(of address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return "" }
        return String(address[address.index(after: at)...])
    }

    /// Splits `Name <address>`, `"Name" <address>` or a bare address; nil when the address is not valid.
    static func parseMailbox(_ text: String) -> (name: String?, address: String)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            return isValid(trimmed) ? (nil, trimmed) : nil
        }
        let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast())
                .replacingOccurrences(of: "\\\"", with: "\"")
                .replacingOccurrences(of: "\\\\", with: "\\")
        }
        guard isValid(address) else { return nil }
        return (name.isEmpty ? nil : name, address)
    }

    /// Whether `name` is a domain name or address literal, so `EHLO` cannot carry anything else.
    static func isValidHeloName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
                    UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"):
                    return true
                default:
                    return false
                }
            }
    }
}
