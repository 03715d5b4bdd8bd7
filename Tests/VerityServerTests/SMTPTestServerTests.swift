import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import VerityServer

// The SMTPEmailSender tests lean on a few promises of their SMTP test server; these pin them down by talking to it
// line by line, so a lax server cannot make those tests pass by accident.
@Suite("SMTPTestServer", .timeLimit(.minutes(1)))
struct SMTPTestServerTests {
    @Test("with STARTTLS offered, AUTH is neither advertised nor accepted before the upgrade, and MAIL needs AUTH")
    func authWaitsForTLS() async throws {
        let certificate = try SelfSignedCertificate.make()
        let credentials = SMTPTestServer.Configuration.Credentials(user: "u", password: "p")
        let configuration = SMTPTestServer.Configuration(security: .startTLS(certificate), credentials: credentials)
        try await SMTPTestServer.withRunning(configuration) { server in
            let (ehlo, codes) = try await converse(port: server.port) { client in
                let ehlo = try await client.send("EHLO client.test")
                let token = Data("\0u\0p".utf8).base64EncodedString()
                return (ehlo, try await client.codes(["AUTH PLAIN \(token)", "MAIL FROM:<a@example.com>", "QUIT"]))
            }
            #expect(ehlo.code == 250)
            #expect(ehlo.extensions["STARTTLS"] != nil)
            #expect(ehlo.extensions["AUTH"] == nil)
            #expect(codes == [538, 530, 221])
            #expect(server.messages().isEmpty)
        }
    }

    @Test("AUTH LOGIN, refused recipients, dot-unstuffing, and the decoded parts of what it records")
    func recordsWhatArrived() async throws {
        let credentials = SMTPTestServer.Configuration.Credentials(user: "user", password: "pass")
        let headers = "Subject: =?UTF-8?Q?caf=C3=A9?= =?UTF-8?B?IGF1IGxhaXQ=?= !\r\nMessage-ID: <m@x>\r\n\r\n"
        try await SMTPTestServer.withRunning(.init(credentials: credentials)) { server in
            let (ehlo, codes) = try await converse(port: server.port) { client in
                let ehlo = try await client.send("EHLO client.test")
                let codes = try await client.codes([
                    "AUTH LOGIN", base64("user"), base64("wrong"),
                    "AUTH LOGIN \(base64("user"))", base64("pass"),
                    "MAIL FROM:<from@example.com>",
                    "RCPT TO:<x@reject.invalid>", "RCPT TO:<y@busy.invalid>", "RCPT TO:<to@example.com>",
                    "DATA", headers + "..dot\r\n.",
                    "QUIT",
                ])
                return (ehlo, codes)
            }
            #expect(ehlo.extensions["AUTH"] == ["LOGIN", "PLAIN"])
            #expect(codes == [334, 334, 535, 334, 235, 250, 550, 451, 250, 354, 250, 221])

            let mail = try #require(server.messages().first)
            #expect(server.messages().count == 1)
            #expect(mail.mailFrom == "from@example.com")
            #expect(mail.rcptTos == ["to@example.com"])
            #expect(mail.authenticatedAs == "user")
            #expect(mail.tls == false)
            #expect(mail.data == headers + ".dot\r\n")
            #expect(mail.subject == "café au lait !")
            #expect(mail.messageID == "<m@x>")
            #expect(mail.body == ".dot\r\n")
        }
    }

    @Test("stopping the server ends a session the client left open and closes its connection")
    func stopEndsOpenSessions() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let greeted = group.next().makePromise(of: Void.self)
        let closed = group.next().makePromise(of: Void.self)
        defer {
            // Settles whichever is still pending if the test fails early; a second completion is ignored.
            greeted.fail(ChannelError.alreadyClosed)
            closed.fail(ChannelError.alreadyClosed)
        }
        try await SMTPTestServer.withRunning(.init()) { server in
            _ = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionWatcher(greeted: greeted, closed: closed))
                    }
                }
                .connect(host: "127.0.0.1", port: server.port).get()
            // The session is running once it has greeted; the client never says a word and never hangs up.
            try await greeted.futureResult.get()
        }
        try await closed.futureResult.get()
    }

    private func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
    }

    /// Connects, reads the greeting (which must be 220), runs `body`, and closes.
    private func converse<Value: Sendable>(
        port: Int,
        _ body: (inout LineClient) async throws -> Value
    ) async throws -> Value {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var client = LineClient(inbound: inbound.makeAsyncIterator(), outbound: outbound)
            let greeting = try await client.read()
            #expect(greeting.code == 220)
            return try await body(&client)
        }
    }
}

/// Sends raw lines and reads replies, nothing more: no checks of its own between the test and the server.
private struct LineClient {
    var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    var parser = SMTPReplyParser()

    mutating func send(_ line: String) async throws -> SMTPReply {
        try await outbound.write(ByteBuffer(string: line + "\r\n"))
        return try await read()
    }

    /// Sends each line in turn and returns the reply codes.
    mutating func codes(_ lines: [String]) async throws -> [Int] {
        var codes: [Int] = []
        for line in lines { codes.append(try await send(line).code) }
        return codes
    }

    mutating func read() async throws -> SMTPReply {
        while true {
            if let reply = try parser.nextReply() { return reply }
            let chunk = try await inbound.next()
            parser.append(try #require(chunk, "the server closed the connection"))
        }
    }
}

/// Reports the first bytes from the server and the end of the connection.
private final class ConnectionWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let greeted: EventLoopPromise<Void>
    private let closed: EventLoopPromise<Void>

    init(greeted: EventLoopPromise<Void>, closed: EventLoopPromise<Void>) {
        self.greeted = greeted
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        greeted.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed.succeed()
        context.fireChannelInactive()
    }
}
