import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Cuts the bytes the server sends into replies, multi-line ones (`250-…` then `250 …`) included.
struct SMTPReplyParser: Sendable {
    /// RFC 5321 caps a reply line at 512 octets; allow more for sloppy servers, but not without bound.
    static let maximumLineLength = 4096
    /// Bounds memory against a server that never ends a multi-line reply.
    static let maximumLines = 256

    private var buffer = ByteBuffer()
    private var pendingCode: Int?
    private var pendingLines: [String] = []

    /// Whether bytes were received that no reply has consumed yet.
    ///
    /// After `220` to STARTTLS this must be false: anything already buffered arrived in plain text and
    /// could have been injected by an attacker (the CVE-2011-0411 family).
    var hasBufferedBytes: Bool { buffer.readableBytes > 0 || pendingCode != nil }

    mutating func append(_ bytes: ByteBuffer) {
        var bytes = bytes
        buffer.writeBuffer(&bytes)
    }

    /// The next complete reply, or nil when more bytes are needed.
    mutating func nextReply() throws(SMTPProtocolError) -> SMTPReply? {
        while let line = try nextLine() {
            let (code, isLast, text) = try Self.parse(line)
            if let pendingCode, pendingCode != code {
                throw SMTPProtocolError(detail: "reply code changed within a multi-line reply")
            }
            pendingCode = code
            pendingLines.append(text)
            if isLast {
                let reply = SMTPReply(code: code, lines: pendingLines)
                pendingCode = nil
                pendingLines = []
                buffer.discardReadBytes()
                return reply
            }
            if pendingLines.count >= Self.maximumLines {
                throw SMTPProtocolError(detail: "multi-line reply too long")
            }
        }
        return nil
    }

    private mutating func nextLine() throws(SMTPProtocolError) -> String? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if view.count > Self.maximumLineLength { throw SMTPProtocolError(detail: "reply line too long") }
            return nil
        }
        var end = newline
        if end > view.startIndex, view[view.index(before: end)] == UInt8(ascii: "\r") {
            end = view.index(before: end)
        }
        let length = newline - view.startIndex + 1
        if length > Self.maximumLineLength { throw SMTPProtocolError(detail: "reply line too long") }
        let line = String(decoding: view[view.startIndex..<end], as: UTF8.self)
        buffer.moveReaderIndex(forwardBy: length)
        return line
    }

    private static func parse(_ line: String) throws(SMTPProtocolError) -> (code: Int, isLast: Bool, text: String) {
        let utf8 = Array(line.utf8)
        guard utf8.count >= 3, utf8[0..<3].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let code = Int(String(decoding: utf8[0..<3], as: UTF8.self)), (200...599).contains(code)
        else {
            throw SMTPProtocolError(detail: "malformed reply line")
        }
        if utf8.count == 3 { return (code, true, "") }
        let separator = utf8[3]
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw SMTPProtocolError(detail: "malformed reply line")
        }
        let text = String(decoding: utf8[4...], as: UTF8.self)
        return (code, separator == UInt8(ascii: " "), text)
    }
}
