import Foundation

/// One message as ``SMTPTestServer`` accepted it: the envelope, the session's state, the raw data, and the parts
/// the tests read, decoded from the raw data by ``MIMEReader``.
struct ReceivedMail: Sendable {
    /// The reverse path from `MAIL FROM`, without its angle brackets.
    var mailFrom: String
    /// Every accepted `RCPT TO` path, in order, without angle brackets.
    var rcptTos: [String]
    /// The message as received after dot-unstuffing, up to and including the CRLF before the final `.`
    /// (invalid UTF-8 replaced).
    var data: String
    /// The decoded `Subject`, nil when there is none.
    var subject: String?
    /// The decoded text body: transfer encoding undone, then the charset decoded.
    var body: String
    /// The `Message-ID` header as written, nil when there is none.
    var messageID: String?
    /// The user name that authenticated the session, nil when it did not.
    var authenticatedAs: String?
    /// Whether the session was encrypted when the message arrived, by STARTTLS or implicit TLS.
    var tls: Bool

    init(mailFrom: String, rcptTos: [String], data: [UInt8], authenticatedAs: String?, tls: Bool) {
        self.mailFrom = mailFrom
        self.rcptTos = rcptTos
        self.data = String(decoding: data, as: UTF8.self)
        let message = MIMEReader(data)
        self.subject = message.header("Subject").map(MIMEReader.decodingEncodedWords)
        self.body = message.decodedBody
        self.messageID = message.header("Message-ID")
        self.authenticatedAs = authenticatedAs
        self.tls = tls
    }
}

/// Reads a single-part RFC 5322 / MIME message the way a mail client would: unfolds headers, decodes RFC 2047
/// encoded words, undoes base64 or quoted-printable and decodes the charset.
///
/// Written here, apart from the sender's `SMTPMessageFormat`, on purpose: an encoder checked only by its own
/// decoder would pass with matching mistakes on both sides.
struct MIMEReader {
    /// Header fields in order, names as written, values unfolded.
    private(set) var headers: [(name: String, value: String)] = []
    /// The bytes after the blank line that ends the header section.
    private(set) var rawBody: [UInt8] = []

    init(_ data: [UInt8]) {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        let headerEnd = data.firstRange(of: separator)
        let headerBytes = headerEnd.map { data[..<$0.lowerBound] } ?? data[...]
        rawBody = headerEnd.map { Array(data[$0.upperBound...]) } ?? []

        // RFC 5322 §2.2.3: a line that starts with white space continues the field above it; unfolding removes
        // only the CRLF.
        var unfolded: [String] = []
        for line in String(decoding: headerBytes, as: UTF8.self).components(separatedBy: "\r\n") {
            if let first = line.first, first == " " || first == "\t", let last = unfolded.popLast() {
                unfolded.append(last + line)
            } else {
                unfolded.append(line)
            }
        }
        for field in unfolded {
            guard let colon = field.firstIndex(of: ":") else { continue }
            let name = field[..<colon].trimmingCharacters(in: .whitespaces)
            let value = field[field.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((name, value))
        }
    }

    /// The first field called `name` (case-insensitive), unfolded and trimmed but not decoded.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The body as text: `Content-Transfer-Encoding` undone, then decoded in the `Content-Type` charset
    /// (US-ASCII when none is given, as RFC 2045 says).
    var decodedBody: String {
        let encoding = header("Content-Transfer-Encoding")?.lowercased() ?? "7bit"
        let bytes: [UInt8]
        switch encoding {
        case "base64":
            let text = String(decoding: rawBody.filter { !Self.isWhitespace($0) }, as: UTF8.self)
            // Undecodable base64 is kept as is, so the mismatch shows in the test's failure message.
            bytes = Data(base64Encoded: text).map { Array($0) } ?? rawBody
        case "quoted-printable":
            bytes = Self.decodingQuotedPrintable(rawBody)
        default:
            bytes = rawBody
        }
        return Self.decode(bytes, charset: contentTypeCharset ?? "us-ascii")
    }

    /// The `charset` parameter of `Content-Type`, lower-cased and unquoted.
    private var contentTypeCharset: String? {
        guard let contentType = header("Content-Type") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if parts.count == 2, parts[0].lowercased() == "charset" {
                return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
            }
        }
        return nil
    }

    /// An unstructured header value with its RFC 2047 encoded words (`=?charset?B|Q?text?=`) decoded; white space
    /// between two adjacent encoded words is dropped, as the RFC requires.
    static func decodingEncodedWords(_ value: String) -> String {
        var result = ""
        var pendingSpace = ""
        var previousWasEncoded = false
        for token in tokens(value) {
            if token.first?.isWhitespace == true {
                pendingSpace += token
                continue
            }
            if let decoded = decodeEncodedWord(token) {
                if !previousWasEncoded { result += pendingSpace }
                result += decoded
                previousWasEncoded = true
            } else {
                result += pendingSpace + token
                previousWasEncoded = false
            }
            pendingSpace = ""
        }
        return result + pendingSpace
    }

    /// Runs of white space and runs of everything else, in order.
    private static func tokens(_ value: String) -> [String] {
        var tokens: [String] = []
        for character in value {
            if let last = tokens.last, last.last?.isWhitespace == character.isWhitespace {
                tokens[tokens.count - 1].append(character)
            } else {
                tokens.append(String(character))
            }
        }
        return tokens
    }

    /// One whole encoded word decoded, or nil when `token` is not one.
    private static func decodeEncodedWord(_ token: String) -> String? {
        guard token.hasPrefix("=?"), token.hasSuffix("?="), token.count >= 8 else { return nil }
        let parts = token.dropFirst(2).dropLast(2).split(separator: "?", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        // RFC 2231 lets a language follow the charset after "*".
        let charset = parts[0].split(separator: "*").first.map { $0.lowercased() } ?? ""
        let text = parts[2]
        let bytes: [UInt8]
        switch parts[1].uppercased() {
        case "B":
            guard let data = Data(base64Encoded: String(text)) else { return nil }
            bytes = Array(data)
        case "Q":
            // RFC 2047 §4.2: "_" stands for a space; "=XX" is a byte in hex.
            bytes = decodingQuotedPrintable(Array(text.utf8).map { $0 == UInt8(ascii: "_") ? 0x20 : $0 })
        default:
            return nil
        }
        return decode(bytes, charset: charset)
    }

    /// Quoted-printable (RFC 2045 §6.7): `=XX` is a byte, `=` at the end of a line is a soft break.
    private static func decodingQuotedPrintable(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < input.count {
            let byte = input[index]
            guard byte == UInt8(ascii: "=") else {
                output.append(byte)
                index += 1
                continue
            }
            if index + 2 < input.count, input[index + 1] == UInt8(ascii: "\r"), input[index + 2] == UInt8(ascii: "\n") {
                index += 3
            } else if index + 2 < input.count, let high = hexValue(input[index + 1]),
                let low = hexValue(input[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Text in one of the charsets a verification mail can reasonably use; bytes that are not valid in it become
    /// U+FFFD, and an unknown charset is read as UTF-8.
    private static func decode(_ bytes: [UInt8], charset: String) -> String {
        switch charset {
        case "us-ascii", "ascii":
            String(decoding: bytes.map { $0 < 0x80 ? $0 : 0xFF }, as: UTF8.self)
        case "iso-8859-1", "latin1":
            String(String.UnicodeScalarView(bytes.map(Unicode.Scalar.init)))
        default:
            String(decoding: bytes, as: UTF8.self)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
