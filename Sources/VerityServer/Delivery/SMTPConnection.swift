import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

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
