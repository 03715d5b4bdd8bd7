import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import VerityCore

/// Renders an ``OutgoingMessage`` as an RFC 5322 / MIME message ready for `DATA`.
enum SMTPMessageFormat {
    /// Raw bytes per encoded word: 42 bytes make 56 base64 characters, so `Subject: =?UTF-8?B?…?=` stays
    /// within the recommended 78 columns and under the 75 that RFC 2047 allows per word.
    static let encodedWordBytes = 42
    /// Base64 body lines, as RFC 2045 prescribes.
    static let base64LineLength = 76

    /// The whole `DATA` payload: headers, blank line, base64 body, dot-stuffed, CRLF line endings, ending in CRLF
    /// (the caller adds the terminating `.`).
    static func render(
        _ message: OutgoingMessage,
        from sender: (name: String?, address: String),
        date: Date,
        messageIDDomain: String
    ) -> String {
        var lines: [String] = []
        let fromValue = sender.name.map { "\(phrase($0)) <\(sender.address)>" } ?? sender.address
        lines.append("From: \(fromValue)")
        lines.append("To: \(message.to)")
        if let subject = message.subject {
            lines.append(contentsOf: "Subject: \(unstructured(subject))".components(separatedBy: "\r\n"))
        }
        lines.append("Date: \(rfc5322Date(date))")
        lines.append("Message-ID: \(messageID(for: message.id, domain: messageIDDomain))")
        // RFC 3834: tells autoresponders and vacation replies not to answer a one-time-code mail.
        lines.append("Auto-Submitted: auto-generated")
        lines.append("MIME-Version: 1.0")
        lines.append("Content-Type: text/plain; charset=UTF-8")
        // Base64 keeps any UTF-8 text 7-bit clean, so no 8BITMIME/SMTPUTF8 support is needed on the way.
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines.append(contentsOf: base64Lines(canonicalText(message.body)))
        return dotStuffed(lines).map { $0 + "\r\n" }.joined()
    }

    /// Doubles a leading `.` on each line (RFC 5321 §4.5.2), so no line can end the `DATA` early.
    static func dotStuffed(_ lines: [String]) -> [String] {
        lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }
    }

    /// Text with every line break (LF, CR or CRLF) as CRLF: the canonical form of `text/plain` (RFC 2046).
    static func canonicalText(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    /// The UTF-8 bytes of `text` in base64, cut into lines of 76 characters.
    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(encoded)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(base64LineLength)))
            rest = rest.dropFirst(base64LineLength)
        }
        return lines
    }

    /// An unstructured header value (Subject): as is when it is short printable ASCII, otherwise RFC 2047
    /// encoded words folded onto continuation lines.
    static func unstructured(_ text: String) -> String {
        let oneLine = text.replacingOccurrences(of: "\r\n", with: " ")
            .replacingOccurrences(of: "\r", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
        let isPlain = oneLine.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        // "=?" could be mistaken for the start of an encoded word; very long lines would break the 998 limit.
        if isPlain, !oneLine.contains("=?"), oneLine.utf8.count <= 900 { return oneLine }
        return encodedWords(oneLine)
    }

    /// A display name: bare when it is made of atoms, quoted when it has specials, encoded when not ASCII.
    static func phrase(_ name: String) -> String {
        let oneLine = name.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        guard oneLine.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), !oneLine.contains("=?") else {
            return encodedWords(oneLine)
        }
        let atext = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~ ".utf8)
        if oneLine.utf8.allSatisfy({ atext.contains($0) }) { return oneLine }
        let escaped = oneLine.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// `=?UTF-8?B?…?=` words joined by folding whitespace (which decoders drop between encoded words).
    ///
    /// Words break between characters, never inside one, since RFC 2047 requires each word to decode on its own.
    static func encodedWords(_ text: String) -> String {
        var units: [[UInt8]] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if bytes.count <= encodedWordBytes {
                units.append(bytes)
            } else {
                // A grapheme cluster too long for one word: split between its scalars, which still decode alone.
                units.append(contentsOf: character.unicodeScalars.map { Array(String($0).utf8) })
            }
        }
        var words: [String] = []
        var chunk: [UInt8] = []
        for unit in units {
            if !chunk.isEmpty, chunk.count + unit.count > encodedWordBytes {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += unit
        }
        words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
        return words.joined(separator: "\r\n ")
    }

    /// `Message-ID` from the outbox id, so every retry of one message carries the same id and receivers can
    /// drop duplicates.
    static func messageID(for id: String, domain: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)
        let local = String(decoding: id.utf8.map { allowed.contains($0) ? $0 : UInt8(ascii: "-") }, as: UTF8.self)
        return "<\(local.isEmpty ? "message" : local)@\(domain.isEmpty ? "localhost" : domain)>"
    }

    /// The date in RFC 5322 form, e.g. `Mon, 05 Jan 2026 09:30:00 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        // A fresh formatter per call: DateFormatter is not Sendable, and sends are far too rare for this to matter.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }
}
