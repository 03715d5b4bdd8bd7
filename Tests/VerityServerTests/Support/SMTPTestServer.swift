import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A real SMTP server on `127.0.0.1` for the SMTPEmailSender tests: ESMTP over TCP with optional STARTTLS or
/// implicit TLS (SMTPS) and AUTH PLAIN/LOGIN, recording every message it accepts.
///
/// The sender under test talks to it exactly as to a relay, so the tests see what really crossed the wire. Written
/// in Swift on SwiftNIO so `swift test` needs nothing else installed. What a session does is in
/// ``SMTPTestSession``; recipients at `reject.invalid` get `550 5.1.1` and at `busy.invalid` `451 4.3.0`.
struct SMTPTestServer: Sendable {
    /// How the server behaves.
    struct Configuration: Sendable {
        /// How connections are protected.
        enum Security: Sendable {
            /// Plain text only; STARTTLS is not offered.
            case none
            /// Plain text, with STARTTLS offered. AUTH is then neither advertised nor accepted (`538`) until after
            /// the upgrade, so a successful AUTH proves the client upgraded first.
            case startTLS(SelfSignedCertificate)
            /// TLS from the first byte.
            case implicitTLS(SelfSignedCertificate)
        }

        /// The only user name and password that authenticate.
        struct Credentials: Sendable {
            var user: String
            var password: String
        }

        var security: Security = .none
        /// When set, AUTH PLAIN and LOGIN are offered and a session must authenticate with exactly these before
        /// `MAIL FROM` (else `530`); wrong ones get `535 5.7.8`. When nil, AUTH is not offered.
        var credentials: Credentials?
    }

    /// The name in the greeting and the first line of the EHLO reply.
    static let hostname = "sink.test"

    /// The port the server listens on, on 127.0.0.1.
    let port: Int
    private let mailbox: NIOLockedValueBox<[ReceivedMail]>

    /// Every message accepted so far, oldest first. A message is here before its `250` is sent, so once the
    /// sender has returned, what it delivered can be read.
    func messages() -> [ReceivedMail] {
        mailbox.withLockedValue { $0 }
    }

    /// Starts a server on a free port, runs `body` with it, then stops it however `body` ends: the listener closes
    /// and every open session ends before this returns.
    static func withRunning(
        _ configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        _ body: (SMTPTestServer) async throws -> Void
    ) async throws {
        let tlsContext = try configuration.security.certificate.map(makeContext)
        let implicitTLS = configuration.security.isImplicitTLS

        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS, let tlsContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        guard let port = listener.channel.localAddress?.port else {
            try? await listener.channel.close()
            throw SMTPTestServerError.noPort
        }
        let server = SMTPTestServer(port: port, mailbox: NIOLockedValueBox([]))

        try await withThrowingDiscardingTaskGroup { group in
            group.addTask {
                try await server.accept(
                    listener,
                    configuration: configuration,
                    startTLS: implicitTLS ? nil : tlsContext,
                    implicitTLS: implicitTLS
                )
            }
            // Cancelling the accept loop closes the listener and ends every session, which the group then awaits.
            defer { group.cancelAll() }
            try await body(server)
        }
    }

    private static func makeContext(_ certificate: SelfSignedCertificate) throws -> NIOSSLContext {
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate.certificate)],
            privateKey: .privateKey(certificate.privateKey)
        )
        return try NIOSSLContext(configuration: tls)
    }

    /// Serves each connection in its own child task until cancelled.
    private func accept(
        _ listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>,
        configuration: Configuration,
        startTLS: NIOSSLContext?,
        implicitTLS: Bool
    ) async throws {
        do {
            try await listener.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { sessions in
                    for try await connection in connections {
                        sessions.addTask {
                            await serve(
                                connection,
                                configuration: configuration,
                                startTLS: startTLS,
                                implicitTLS: implicitTLS
                            )
                        }
                    }
                }
            }
        } catch {
            // Stopping the server cancels the accept loop; how the stream reports that is no failure.
            guard Task.isCancelled else { throw error }
        }
    }

    private func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>,
        configuration: Configuration,
        startTLS: NIOSSLContext?,
        implicitTLS: Bool
    ) async {
        let mailbox = self.mailbox
        do {
            try await connection.executeThenClose { inbound, outbound in
                var session = SMTPTestSession(
                    channel: connection.channel,
                    inbound: inbound,
                    outbound: outbound,
                    credentials: configuration.credentials,
                    startTLS: startTLS,
                    isEncrypted: implicitTLS,
                    record: { mail in mailbox.withLockedValue { $0.append(mail) } }
                )
                try await session.run()
            }
        } catch {
            // The client hung up, refused our certificate or was cut off by the server stopping: that ends this
            // session only. The tests judge the outcome by what the client saw and what was recorded.
        }
    }
}

extension SMTPTestServer.Configuration.Security {
    fileprivate var certificate: SelfSignedCertificate? {
        switch self {
        case .none: nil
        case .startTLS(let certificate), .implicitTLS(let certificate): certificate
        }
    }

    fileprivate var isImplicitTLS: Bool {
        if case .implicitTLS = self { return true }
        return false
    }
}

enum SMTPTestServerError: Error {
    /// The listener has no port to report, which a TCP socket bound to 127.0.0.1 always has.
    case noPort
}
