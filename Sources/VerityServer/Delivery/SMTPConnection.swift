import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// The stage of an SMTP conversation, named in failure reasons so an operator knows where it broke.
enum SMTPStep: String, Sendable {
    case connect = "connect"
    case greeting = "greeting"
    case ehlo = "EHLO"
    /// The second EHLO, the first exchange over TLS: handshake failures surface here.
    case ehloAfterStartTLS = "EHLO after STARTTLS"
    case startTLS = "STARTTLS"
    case auth = "AUTH"
    case mailFrom = "MAIL FROM"
    case rcptTo = "RCPT TO"
    case data = "DATA"
    case message = "end of DATA"
    case quit = "QUIT"
}

/// Why an SMTP conversation failed, before it is turned into a ``DeliveryError``.
///
/// `detail` must never carry the password, the message body or the full recipient address:
/// it ends up in the outbox record and the logs.
struct SMTPFailure: Error, Sendable, Equatable {
    var step: SMTPStep
    var kind: DeliveryError.Kind
    var detail: String

    var deliveryError: DeliveryError {
        DeliveryError(kind, "SMTP \(step.rawValue): \(detail)")
    }
}

/// One reply from the server: its three-digit code and the text of each line.
struct SMTPReply: Sendable, Equatable {
    var code: Int
    var lines: [String]

    /// The enhanced status code (RFC 3463, e.g. `5.1.1`) at the start of the first line, if any.
    ///
    /// Failure reasons quote only this and the code, never the free text: servers like to echo the
    /// recipient address there.
    var enhancedStatus: String? {
        guard let first = lines.first, let token = first.split(separator: " ").first else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            let klass = parts.first, ["2", "4", "5"].contains(klass)
        else { return nil }
        return String(token)
    }

    /// The code and enhanced status, e.g. `550 5.1.1`: safe to put in a failure reason.
    var summary: String {
        if let enhancedStatus { return "\(code) \(enhancedStatus)" }
        return "\(code)"
    }

    /// The EHLO keywords (upper-cased) with their parameters, taken from every line but the greeting one.
    var extensions: [String: [String]] {
        var result: [String: [String]] = [:]
        for line in lines.dropFirst() {
            let words = line.split(separator: " ").map(String.init)
            guard let keyword = words.first else { continue }
            result[keyword.uppercased()] = words.dropFirst().map { $0.uppercased() }
        }
        return result
    }
}

/// A reply that does not follow RFC 5321's grammar.
struct SMTPProtocolError: Error, Sendable, Equatable {
    var detail: String
}

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

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// The client side of one SMTP session over a NIO channel: send a line, read a reply, upgrade to TLS.
///
/// Deliberately not `Sendable`: it owns the inbound iterator, which only the task running the
/// conversation may touch.
struct SMTPConnection {
    private let channel: any Channel
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var parser = SMTPReplyParser()

    /// Whether the bytes on the wire are encrypted, by implicit TLS or after STARTTLS.
    private(set) var isEncrypted: Bool

    init(
        channel: any Channel,
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        isEncrypted: Bool
    ) {
        self.channel = channel
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
        self.isEncrypted = isEncrypted
    }

    /// Reads one complete reply.
    mutating func readReply(step: SMTPStep) async throws(SMTPFailure) -> SMTPReply {
        do {
            while true {
                if let reply = try parser.nextReply() { return reply }
                guard let chunk = try await inbound.next() else {
                    throw SMTPFailure(step: step, kind: .transient, detail: "connection closed by server")
                }
                parser.append(chunk)
            }
        } catch let failure as SMTPFailure {
            throw failure
        } catch let error as SMTPProtocolError {
            throw SMTPFailure(step: step, kind: .transient, detail: "protocol error: \(error.detail)")
        } catch {
            throw SMTPFailure(step: step, kind: .transient, detail: Self.describe(error))
        }
    }

    /// Writes raw bytes; the caller supplies the CRLFs.
    func write(_ bytes: ByteBuffer, step: SMTPStep) async throws(SMTPFailure) {
        do {
            try await outbound.write(bytes)
        } catch {
            throw SMTPFailure(step: step, kind: .transient, detail: Self.describe(error))
        }
    }

    /// Sends one command line and reads its reply, failing unless the reply code is one of `expecting`.
    ///
    /// Failures quote only the step and reply code, so a line carrying credentials or an address is never echoed.
    @discardableResult
    mutating func command(_ line: String, step: SMTPStep, expecting: Set<Int>) async throws(SMTPFailure)
        -> SMTPReply
    {
        try await write(ByteBuffer(string: line + "\r\n"), step: step)
        return try await expect(expecting, step: step)
    }

    /// Reads a reply and fails unless its code is one of `codes`: 5xx permanently, anything else transiently.
    @discardableResult
    mutating func expect(_ codes: Set<Int>, step: SMTPStep) async throws(SMTPFailure) -> SMTPReply {
        let reply = try await readReply(step: step)
        guard codes.contains(reply.code) else {
            // 4xx is the server asking us to come back later; 5xx means this will never work as sent.
            let kind: DeliveryError.Kind = reply.code >= 500 ? .permanent : .transient
            let verb = reply.code >= 400 ? "rejected" : "unexpected reply"
            throw SMTPFailure(step: step, kind: kind, detail: "\(verb) \(reply.summary)")
        }
        return reply
    }

    /// Puts a TLS client handler under the SMTP session, right after the server's `220` to STARTTLS.
    mutating func startTLS(context: NIOSSLContext, serverHostname: String?) async throws(SMTPFailure) {
        guard !parser.hasBufferedBytes else {
            throw SMTPFailure(step: .startTLS, kind: .transient, detail: "server sent data before the TLS handshake")
        }
        let channel = self.channel
        do {
            // Wait for the handshake itself, so its verdict (say, an untrusted certificate) is the error reported,
            // not whichever of the next write or read happens to notice the closed connection first.
            let handshake = channel.eventLoop.makePromise(of: Void.self)
            try await channel.eventLoop.submit {
                // Created on the event loop because the handlers are not Sendable.
                let handler = try NIOSSLClientHandler(context: context, serverHostname: serverHostname)
                try channel.pipeline.syncOperations.addHandler(handler, position: .first)
                try channel.pipeline.syncOperations.addHandler(
                    TLSHandshakeWaiter(promise: handshake), position: .after(handler))
            }.get()
            try await handshake.futureResult.get()
        } catch {
            throw SMTPFailure(step: .startTLS, kind: .transient, detail: Self.describe(error))
        }
        isEncrypted = true
    }

    /// A short, secret-free description of a transport error.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            if error.errnoCode == ECONNREFUSED { return "connection refused" }
            if error.errnoCode == ECONNRESET { return "connection reset" }
            return "I/O error (errno \(error.errnoCode))"
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "host name lookup failed" }
            if let first = error.connectionErrors.first { return describe(first.error) }
            return "connection failed"
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return "connection timed out"
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: return "connection closed"
            default: return "channel error"
            }
        case let error as NIOSSLError:
            guard case .handshakeFailed(let reason) = error else { return "TLS error (\(error))" }
            // BoringSSL's full text is long and mostly file paths; the verification verdict is what matters.
            if "\(reason)".contains("CERTIFICATE_VERIFY_FAILED") {
                return "TLS handshake failed (certificate verification failed)"
            }
            return "TLS handshake failed"
        case is BoringSSLError:
            return "TLS error"
        case let error as NIOSSLExtraError:
            return "TLS error (\(error))"
        case is CancellationError:
            return "cancelled"
        default:
            return "\(type(of: error))"
        }
    }
}

/// Completes its promise when the TLS handshake beneath it succeeds or fails, then steps out of the pipeline.
private final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var promise: EventLoopPromise<Void>?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            promise?.succeed()
            promise = nil
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise?.fail(error)
        promise = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.eof)
        promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise?.fail(ChannelError.ioOnClosedChannel)
        promise = nil
    }
}
