import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
import VerityCore

@testable import VerityServer

// End-to-end tests against a real SMTP server over TCP (SMTPTestServer in Support/, on SwiftNIO), plus unit tests of
// the pieces that are easier to pin down without a network.
@Suite("SMTPEmailSender", .serialized, .timeLimit(.minutes(2)))
struct SMTPEmailSenderTests {
    static let sender = "codes@verity.test"
    static let user = "verity"
    static let password = "s3cret-pa55word"
    static let credentials = SMTPTestServer.Configuration.Credentials(user: user, password: password)

    // MARK: - Against a real server

    @Test("delivers a UTF-8 message with AUTH PLAIN, dot lines intact")
    func deliversUTF8MessageWithAuth() async throws {
        try await withServer(.init(credentials: Self.credentials)) { server in
            let body = "認証コード: 123456\n.a line starting with a dot\n..and two dots\n.\nend"
            let message = OutgoingMessage(
                id: "msg_01TEST",
                channel: .email,
                to: "alice@example.com",
                subject: "あなたの認証コード (Verity)",
                body: body
            )
            try await makeSender(server, security: .none, username: Self.user, password: Self.password).send(message)

            let mail = try #require(server.messages().first)
            let delivered = server.messages()
            #expect(delivered.count == 1)
            #expect(mail.mailFrom == Self.sender)
            #expect(mail.rcptTos == ["alice@example.com"])
            #expect(mail.authenticatedAs == Self.user)
            #expect(mail.tls == false)
            #expect(mail.subject == "あなたの認証コード (Verity)")
            #expect(normalized(mail.body) == body)
            #expect(mail.messageID == "<msg_01TEST@verity.test>")
            let headers = mail.data.components(separatedBy: "\r\n\r\n").first ?? ""
            #expect(headers.contains("From: Verity Codes <codes@verity.test>"))
            #expect(headers.contains("To: alice@example.com"))
            #expect(headers.contains("MIME-Version: 1.0"))
            #expect(headers.contains("Content-Type: text/plain; charset=UTF-8"))
            #expect(headers.contains("Content-Transfer-Encoding: base64"))
            #expect(headers.contains("\r\nDate: "))
            // Every line break on the wire is CRLF: no bare LF slipped through.
            #expect(!mail.data.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
        }
    }

    @Test("wrong password is a permanent failure that names AUTH and 535 but not the password")
    func wrongPasswordIsPermanent() async throws {
        try await withServer(.init(credentials: Self.credentials)) { server in
            let sender = makeSender(server, security: .none, username: Self.user, password: "not-the-password")
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .permanent)
            #expect(error?.reason.contains("AUTH") == true)
            #expect(error?.reason.contains("535") == true)
            #expect(error?.reason.contains("not-the-password") == false)
            #expect(error?.reason.contains(Self.message.body) == false)
            let delivered = server.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("STARTTLS with a self-signed certificate when verification is off")
    func startTLSWithSelfSignedCertificate() async throws {
        let certificate = try SelfSignedCertificate.make()
        try await withServer(.init(security: .startTLS(certificate), credentials: Self.credentials)) { server in
            let sender = makeSender(
                server,
                security: .startTLS,
                username: Self.user,
                password: Self.password,
                certificateVerification: false
            )
            try await sender.send(Self.message)

            let mail = try #require(server.messages().first)
            // The server requires TLS before AUTH, so both flags together prove the upgrade happened first.
            #expect(mail.tls == true)
            #expect(mail.authenticatedAs == Self.user)
            #expect(mail.rcptTos == [Self.message.to])
            #expect(mail.subject == Self.message.subject)
            #expect(normalized(mail.body) == Self.message.body)
        }
    }

    @Test("implicit TLS (SMTPS) with AUTH")
    func implicitTLS() async throws {
        let certificate = try SelfSignedCertificate.make()
        try await withServer(.init(security: .implicitTLS(certificate), credentials: Self.credentials)) { server in
            let sender = makeSender(
                server,
                security: .tls,
                username: Self.user,
                password: Self.password,
                certificateVerification: false
            )
            try await sender.send(Self.message)

            let mail = try #require(server.messages().first)
            #expect(mail.tls == true)
            #expect(mail.authenticatedAs == Self.user)
            #expect(normalized(mail.body) == Self.message.body)
        }
    }

    @Test("STARTTLS refuses a self-signed certificate when verification is on")
    func startTLSVerifiesCertificates() async throws {
        let certificate = try SelfSignedCertificate.make()
        try await withServer(.init(security: .startTLS(certificate))) { server in
            let sender = makeSender(server, security: .startTLS)
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.contains("certificate verification failed") == true, "\(error?.reason ?? "")")
            let delivered = server.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("STARTTLS configured but not offered: nothing is sent in plain text")
    func startTLSMissingIsRefused() async throws {
        try await withServer(.init()) { server in
            let sender = makeSender(server, security: .startTLS, username: Self.user, password: Self.password)
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.contains("STARTTLS") == true)
            let delivered = server.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("550 for the recipient is permanent and the reason hides the address")
    func rejectedRecipientIsPermanent() async throws {
        try await withServer(.init()) { server in
            var message = Self.message
            message.to = "nobody@reject.invalid"
            let error = await #expect(throws: DeliveryError.self) {
                try await makeSender(server, security: .none).send(message)
            }
            #expect(error?.kind == .permanent)
            #expect(error?.reason.contains("RCPT TO") == true)
            #expect(error?.reason.contains("550") == true)
            #expect(error?.reason.contains("nobody@reject.invalid") == false)
            #expect(error?.reason.contains("nobody") == false)
        }
    }

    @Test("451 for the recipient is transient")
    func busyRecipientIsTransient() async throws {
        try await withServer(.init()) { server in
            var message = Self.message
            message.to = "someone@busy.invalid"
            let error = await #expect(throws: DeliveryError.self) {
                try await makeSender(server, security: .none).send(message)
            }
            #expect(error?.kind == .transient)
            #expect(error?.reason.contains("451") == true)
        }
    }

    @Test("a closed port is a transient failure")
    func closedPortIsTransient() async throws {
        // Bind a free port and release it at once, so nothing listens there.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        try await listener.close()

        let sender = SMTPEmailSender(
            configuration: SMTPConfiguration(host: "127.0.0.1", port: port, from: Self.sender, security: .none),
            logger: Logger(label: "test.smtp")
        )
        let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
        #expect(error?.kind == .transient)
        #expect(error?.reason.contains("connect") == true)
    }

    @Test("a server that never greets times out as a transient failure")
    func silentServerTimesOut() async throws {
        // Accepts connections and never says a word.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        let sender = SMTPEmailSender(
            configuration: SMTPConfiguration(
                host: "127.0.0.1",
                port: port,
                from: Self.sender,
                security: .none,
                timeout: .milliseconds(500)
            ),
            logger: Logger(label: "test.smtp")
        )
        let started = ContinuousClock.now
        let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
        try await listener.close()
        #expect(error?.kind == .transient)
        #expect(error?.reason.contains("timed out") == true)
        #expect(error?.reason.contains("greeting") == true)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("an unusable recipient address is permanent and never reaches the wire")
    func invalidRecipientIsPermanent() async throws {
        // Port 9 (discard) would fail transiently if the sender got as far as connecting.
        let sender = SMTPEmailSender(
            configuration: SMTPConfiguration(host: "127.0.0.1", port: 9, from: Self.sender, security: .none),
            logger: Logger(label: "test.smtp")
        )
        for address in ["alice@example.com>\r\nRCPT TO:<mallory@example.com", "no-at-sign", "a b@example.com"] {
            var message = Self.message
            message.to = address
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message) }
            #expect(error?.kind == .permanent)
        }
    }

    // MARK: - Without a server

    @Test("reply parser handles multi-line replies split across reads")
    func replyParser() throws {
        var parser = SMTPReplyParser()
        parser.append(ByteBuffer(string: "250-sink.test Hello\r\n250-STARTTLS\r\n250-AUTH LOGIN"))
        #expect(try parser.nextReply() == nil)
        parser.append(ByteBuffer(string: " PLAIN\r\n250 8BITMIME\r\n550 5.1.1 <bob@example.com> no\r\n"))
        let ehlo = try #require(try parser.nextReply())
        #expect(ehlo.code == 250)
        #expect(ehlo.lines.count == 4)
        #expect(ehlo.extensions["STARTTLS"] == [])
        #expect(ehlo.extensions["AUTH"] == ["LOGIN", "PLAIN"])
        let rejection = try #require(try parser.nextReply())
        #expect(rejection.summary == "550 5.1.1")
        #expect(try parser.nextReply() == nil)
        #expect(!parser.hasBufferedBytes)

        var mixed = SMTPReplyParser()
        mixed.append(ByteBuffer(string: "250-first\r\n251 second\r\n"))
        #expect(throws: SMTPProtocolError.self) { try mixed.nextReply() }

        var garbage = SMTPReplyParser()
        garbage.append(ByteBuffer(string: "hello\r\n"))
        #expect(throws: SMTPProtocolError.self) { try garbage.nextReply() }
    }

    @Test("rendered message: CRLF lines, short lines, dot-stuffed, encoded subject")
    func renderedMessage() throws {
        let message = OutgoingMessage(
            id: "msg_42",
            channel: .email,
            to: "alice@example.com",
            subject: String(repeating: "認証コード ", count: 12),
            body: ".hidden?\n" + String(repeating: "長い本文。", count: 100)
        )
        let rendered = SMTPMessageFormat.render(
            message,
            from: (name: "Verity", address: Self.sender),
            date: Date(timeIntervalSince1970: 0),
            messageIDDomain: "verity.test"
        )
        #expect(rendered.hasSuffix("\r\n"))
        let lines = rendered.components(separatedBy: "\r\n").dropLast()
        #expect(lines.allSatisfy { !$0.contains("\n") && !$0.contains("\r") })
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(lines.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } })
        #expect(lines.contains("Date: Thu, 01 Jan 1970 00:00:00 +0000"))
        #expect(lines.contains("Message-ID: <msg_42@verity.test>"))

        // The subject folds over several encoded words that decode, joined, to the original.
        let subjectLines = lines.drop { !$0.hasPrefix("Subject: ") }.prefix {
            $0.hasPrefix("Subject: ") || $0.hasPrefix(" ")
        }
        #expect(subjectLines.count > 1)
        let decodedSubject = try subjectLines.map { line in
            let word = line.replacingOccurrences(of: "Subject: ", with: "").trimmingCharacters(in: .whitespaces)
            #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?="))
            let base64 = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            let data = try #require(Data(base64Encoded: String(base64)))
            return try #require(String(data: data, encoding: .utf8))
        }.joined()
        #expect(decodedSubject == message.subject)

        let body = lines.drop { !$0.isEmpty }.dropFirst().joined()
        let decodedBody = try #require(Data(base64Encoded: body)).map { $0 }
        #expect(String(decoding: decodedBody, as: UTF8.self) == SMTPMessageFormat.canonicalText(message.body))
    }

    @Test("dot-stuffing doubles leading dots only")
    func dotStuffing() {
        #expect(SMTPMessageFormat.dotStuffed([".", "..x", "a.b", "", ".end"]) == ["..", "...x", "a.b", "", "..end"])
    }

    @Test("header values: ASCII stays readable, specials are quoted, the rest is encoded")
    func headerValues() {
        #expect(SMTPMessageFormat.unstructured("Your code") == "Your code")
        #expect(SMTPMessageFormat.unstructured("a\r\nBcc: x@y.z") == "a Bcc: x@y.z")
        #expect(SMTPMessageFormat.unstructured("コード") == "=?UTF-8?B?44Kz44O844OJ?=")
        #expect(SMTPMessageFormat.phrase("Verity Codes") == "Verity Codes")
        #expect(SMTPMessageFormat.phrase("Verity, Inc.") == "\"Verity, Inc.\"")
        #expect(SMTPMessageFormat.phrase("認証") == "=?UTF-8?B?6KqN6Ki8?=")
    }

    @Test("sender parsing and address checks")
    func addresses() throws {
        let named = try #require(SMTPAddress.parseMailbox("\"Verity, Inc.\" <codes@verity.test>"))
        #expect(named.name == "Verity, Inc.")
        #expect(named.address == "codes@verity.test")
        let bare = try #require(SMTPAddress.parseMailbox("codes@verity.test"))
        #expect(bare.name == nil)
        #expect(SMTPAddress.parseMailbox("Verity <not an address>") == nil)
        #expect(SMTPAddress.isValid("a.b+tag@sub.example.com"))
        #expect(!SMTPAddress.isValid("a@b@c"))
        #expect(!SMTPAddress.isValid("a@example.com\r\nDATA"))
        #expect(!SMTPAddress.isValid("ålice@example.com"))
        #expect(SMTPAddress.domain(of: "alice@example.com") == "example.com")
    }

    @Test("the configuration never prints its password")
    func configurationRedactsPassword() {
        let configuration = SMTPConfiguration(
            host: "mail.example.com",
            username: Self.user,
            password: Self.password,
            from: Self.sender
        )
        #expect(configuration.port == 587)
        #expect(SMTPConfiguration(host: "h", from: Self.sender, security: .tls).port == 465)
        #expect(!"\(configuration)".contains(Self.password))
        #expect(!String(reflecting: configuration).contains(Self.password))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains(Self.password))
    }

    // MARK: - Helpers

    static let message = OutgoingMessage(
        id: "msg_plain",
        channel: .email,
        to: "bob@example.com",
        subject: "Your Verity code",
        body: "Your code is 654321."
    )

    private func makeSender(
        _ server: SMTPTestServer,
        security: SMTPConfiguration.Security,
        username: String? = nil,
        password: String? = nil,
        certificateVerification: Bool = true
    ) -> SMTPEmailSender {
        SMTPEmailSender(
            configuration: SMTPConfiguration(
                host: "127.0.0.1",
                port: server.port,
                username: username,
                password: password,
                from: "Verity Codes <\(Self.sender)>",
                security: security,
                certificateVerification: certificateVerification,
                timeout: .seconds(15),
                heloName: "client.verity.test"
            ),
            logger: Logger(label: "test.smtp")
        )
    }

    /// The decoded body keeps the CRLFs of canonical text/plain; compared as LF, like the message it came from.
    private func normalized(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Runs `body` against a fresh SMTP server, which stops however `body` ends.
    private func withServer(
        _ configuration: SMTPTestServer.Configuration,
        _ body: (SMTPTestServer) async throws -> Void
    ) async throws {
        try await SMTPTestServer.withRunning(configuration, body)
    }
}
