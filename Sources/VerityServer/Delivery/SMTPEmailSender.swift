import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import VerityCore

/// Sends email through an SMTP server (RFC 5321), one connection per message.
///
/// Failures are ``DeliveryError``s: connection problems, timeouts and `4xx` replies are `.transient` (the outbox
/// retries), `5xx` replies and unusable recipient addresses are `.permanent`. Reasons name the SMTP step and the reply
/// code, never the password, the body or the full recipient address.
public struct SMTPEmailSender: MessageSender {
    /// Where and how mail is sent.
    public let configuration: SMTPConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// Built once because loading the trust roots is not free; nil when the configuration never uses TLS.
    private let tlsContext: Result<NIOSSLContext, any Error>?

    /// Creates a sender.
    ///
    /// - Parameters:
    ///   - configuration: the server to use and how.
    ///   - eventLoopGroup: where the connections run.
    ///   - logger: receives debug-level facts about each conversation, never secrets or bodies.
    ///   - now: the clock, for the message's `Date` header.
    public init(
        configuration: SMTPConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.now = now
        if configuration.security == .none {
            self.tlsContext = nil
        } else {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.minimumTLSVersion = .tlsv12
            if !configuration.certificateVerification { tls.certificateVerification = .none }
            self.tlsContext = Result { try NIOSSLContext(configuration: tls) }
        }
    }

    /// Sends one email, returning once the server has accepted it for delivery.
    public func send(_ message: OutgoingMessage) async throws {
        guard message.channel == .email else {
            throw DeliveryError(.permanent, "SMTP: not an email message (\(message.channel.rawValue))")
        }
        guard SMTPAddress.isValid(message.to) else {
            // The message itself is unusable, so retrying cannot help.
            throw DeliveryError(.permanent, "SMTP: recipient address is not a plain ASCII mailbox")
        }
        // Configuration problems stay transient: once an operator fixes them, queued messages can still go out.
        guard let sender = SMTPAddress.parseMailbox(configuration.from) else {
            throw DeliveryError(.transient, "SMTP: the configured sender address is invalid")
        }
        guard SMTPAddress.isValidHeloName(configuration.heloName) else {
            throw DeliveryError(.transient, "SMTP: the configured heloName is invalid")
        }
        let tls: NIOSSLContext?
        switch tlsContext {
        case .none: tls = nil
        case .success(let context): tls = context
        case .failure: throw DeliveryError(.transient, "SMTP: could not set up TLS")
        }

        let payload = SMTPMessageFormat.render(
            message,
            from: sender,
            date: now(),
            messageIDDomain: SMTPAddress.domain(of: sender.address)
        )
        let envelope = Envelope(from: sender.address, to: message.to, payload: payload)
        var logger = self.logger
        logger[metadataKey: "message_id"] = "\(message.id)"
        logger[metadataKey: "recipient_domain"] = "\(SMTPAddress.domain(of: message.to))"
        logger[metadataKey: "smtp_server"] = "\(configuration.host):\(configuration.port)"

        switch await sendWithTimeout(envelope, tls: tls, logger: logger) {
        case .success:
            logger.debug("SMTP server accepted the message")
        case .failure(let failure):
            logger.debug(
                "SMTP send failed",
                metadata: ["smtp_step": "\(failure.step.rawValue)", "smtp_failure": "\(failure.detail)"]
            )
            throw failure.deliveryError
        }
    }

    /// What the conversation needs to know about one message.
    private struct Envelope: Sendable {
        var from: String
        var to: String
        /// The dot-stuffed message, ending in CRLF.
        var payload: String
    }

    private typealias Outcome = Result<Void, SMTPFailure>

    private enum RaceOutcome: Sendable {
        case finished(Outcome)
        case timedOut
        case timerCancelled
    }

    /// Runs the conversation against the configured deadline.
    ///
    /// One deadline for the whole send, rather than one per read, bounds how long a slow-dripping server can
    /// hold an outbox worker. Cancelling the conversation makes its pending read throw, so it ends promptly.
    private func sendWithTimeout(
        _ envelope: Envelope,
        tls: NIOSSLContext?,
        logger: Logger
    ) async -> Outcome {
        let timeout = configuration.timeout
        return await withTaskGroup(of: RaceOutcome.self) { group in
            group.addTask { .finished(await self.converse(envelope, tls: tls, logger: logger)) }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                    return .timedOut
                } catch {
                    return .timerCancelled
                }
            }
            var timedOut = false
            while let outcome = await group.next() {
                switch outcome {
                case .timedOut:
                    timedOut = true
                    group.cancelAll()
                case .timerCancelled:
                    continue
                case .finished(let result):
                    group.cancelAll()
                    // A conversation that failed because the deadline cancelled it reports the step it was in.
                    if timedOut, case .failure(let failure) = result {
                        return .failure(
                            SMTPFailure(step: failure.step, kind: .transient, detail: "timed out after \(timeout)")
                        )
                    }
                    return result
                }
            }
            return .failure(SMTPFailure(step: .connect, kind: .transient, detail: "cancelled"))
        }
    }

    /// Connects, talks SMTP and closes, reporting rather than throwing so the timeout race can inspect the outcome.
    private func converse(_ envelope: Envelope, tls: NIOSSLContext?, logger: Logger) async -> Outcome {
        let asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            asyncChannel = try await connect(implicitTLS: configuration.security == .tls ? tls : nil)
        } catch {
            return .failure(SMTPFailure(step: .connect, kind: .transient, detail: SMTPConnection.describe(error)))
        }
        logger.debug("SMTP connected", metadata: ["smtp_security": "\(configuration.security)"])
        do {
            try await asyncChannel.executeThenClose { inbound, outbound in
                var connection = SMTPConnection(
                    channel: asyncChannel.channel,
                    inbound: inbound,
                    outbound: outbound,
                    isEncrypted: configuration.security == .tls
                )
                try await run(&connection, envelope, tls: tls, logger: logger)
            }
            return .success(())
        } catch let failure as SMTPFailure {
            return .failure(failure)
        } catch {
            return .failure(SMTPFailure(step: .connect, kind: .transient, detail: SMTPConnection.describe(error)))
        }
    }

    private func connect(implicitTLS: NIOSSLContext?) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        let serverHostname = sniHostname
        return try await ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(TimeAmount(configuration.timeout))
            .connect(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS {
                        let handler = try NIOSSLClientHandler(context: implicitTLS, serverHostname: serverHostname)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// The name sent as SNI and checked against the certificate; nil for IP literals, which SNI does not allow
    /// (NIOSSL then checks the certificate against the address it connected to).
    private var sniHostname: String? {
        (try? SocketAddress(ipAddress: configuration.host, port: 0)) == nil ? configuration.host : nil
    }

    /// The SMTP dialogue itself, from greeting to QUIT.
    private func run(
        _ connection: inout SMTPConnection,
        _ envelope: Envelope,
        tls: NIOSSLContext?,
        logger: Logger
    ) async throws(SMTPFailure) {
        try await connection.expect([220], step: .greeting)
        let ehlo = "EHLO \(configuration.heloName)"
        var capabilities = try await connection.command(ehlo, step: .ehlo, expecting: [250]).extensions

        if configuration.security == .startTLS {
            guard capabilities["STARTTLS"] != nil, let tls else {
                // Carrying on in plain text would hand credentials and codes to whoever stripped the offer.
                throw SMTPFailure(step: .startTLS, kind: .transient, detail: "server does not offer STARTTLS")
            }
            try await connection.command("STARTTLS", step: .startTLS, expecting: [220])
            try await connection.startTLS(context: tls, serverHostname: sniHostname)
            // RFC 3207: everything learned before the upgrade is void, so ask again over TLS.
            capabilities = try await connection.command(ehlo, step: .ehloAfterStartTLS, expecting: [250]).extensions
            logger.debug("SMTP upgraded to TLS")
        }

        if let username = configuration.username, let password = configuration.password {
            guard connection.isEncrypted || configuration.security == .none else {
                throw SMTPFailure(step: .auth, kind: .transient, detail: "refusing to send credentials unencrypted")
            }
            if let mechanisms = capabilities["AUTH"], !mechanisms.contains("PLAIN") {
                throw SMTPFailure(step: .auth, kind: .transient, detail: "server does not offer AUTH PLAIN")
            }
            let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
            try await connection.command("AUTH PLAIN \(token)", step: .auth, expecting: [235])
            logger.debug("SMTP authenticated")
        }

        try await connection.command("MAIL FROM:<\(envelope.from)>", step: .mailFrom, expecting: [250])
        try await connection.command("RCPT TO:<\(envelope.to)>", step: .rcptTo, expecting: [250, 251])
        try await connection.command("DATA", step: .data, expecting: [354])
        try await connection.write(ByteBuffer(string: envelope.payload + ".\r\n"), step: .message)
        try await connection.expect([250], step: .message)

        // The message is accepted: from here on nothing may fail the send, or the outbox would send it twice.
        do {
            try await connection.command("QUIT", step: .quit, expecting: [221])
        } catch {
            logger.debug("SMTP QUIT did not complete cleanly", metadata: ["smtp_failure": "\(error.detail)"])
        }
    }
}
