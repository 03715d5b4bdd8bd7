import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
import VerityCore

@testable import VerityServer

// End-to-end tests against a real SMTP server (Tests/Support/smtp_sink.py, built on aiosmtpd), plus unit tests of
// the pieces that are easier to pin down without a network.
@Suite("SMTPEmailSender", .serialized, .timeLimit(.minutes(2)))
struct SMTPEmailSenderTests {
    static let sender = "codes@verity.test"
    static let user = "verity"
    static let password = "s3cret-pa55word"

    // MARK: - Against a real server

    @Test("delivers a UTF-8 message with AUTH PLAIN, dot lines intact")
    func deliversUTF8MessageWithAuth() async throws {
        try await withSink(["--auth-user", Self.user, "--auth-password", Self.password]) { sink in
            let body = "認証コード: 123456\n.a line starting with a dot\n..and two dots\n.\nend"
            let message = OutgoingMessage(
                id: "msg_01TEST",
                channel: .email,
                to: "alice@example.com",
                subject: "あなたの認証コード (Verity)",
                body: body
            )
            try await makeSender(sink, security: .none, username: Self.user, password: Self.password).send(message)

            let mail = try #require(try sink.messages().first)
            let delivered = try sink.messages()
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
        try await withSink(["--auth-user", Self.user, "--auth-password", Self.password]) { sink in
            let sender = makeSender(sink, security: .none, username: Self.user, password: "not-the-password")
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .permanent)
            #expect(error?.reason.contains("AUTH") == true)
            #expect(error?.reason.contains("535") == true)
            #expect(error?.reason.contains("not-the-password") == false)
            #expect(error?.reason.contains(Self.message.body) == false)
            let delivered = try sink.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("STARTTLS with a self-signed certificate when verification is off")
    func startTLSWithSelfSignedCertificate() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let arguments = [
            "--tls-cert", certificate.certificatePath, "--tls-key", certificate.keyPath,
            "--auth-user", Self.user, "--auth-password", Self.password,
        ]
        try await withSink(arguments) { sink in
            let sender = makeSender(
                sink,
                security: .startTLS,
                username: Self.user,
                password: Self.password,
                certificateVerification: false
            )
            try await sender.send(Self.message)

            let mail = try #require(try sink.messages().first)
            // The sink requires TLS before AUTH, so both flags together prove the upgrade happened first.
            #expect(mail.tls == true)
            #expect(mail.authenticatedAs == Self.user)
            #expect(mail.rcptTos == [Self.message.to])
            #expect(mail.subject == Self.message.subject)
            #expect(normalized(mail.body) == Self.message.body)
        }
    }

    @Test("implicit TLS (SMTPS) with AUTH")
    func implicitTLS() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let arguments = [
            "--tls-cert", certificate.certificatePath, "--tls-key", certificate.keyPath, "--implicit-tls",
            "--auth-user", Self.user, "--auth-password", Self.password,
        ]
        try await withSink(arguments) { sink in
            let sender = makeSender(
                sink,
                security: .tls,
                username: Self.user,
                password: Self.password,
                certificateVerification: false
            )
            try await sender.send(Self.message)

            let mail = try #require(try sink.messages().first)
            #expect(mail.tls == true)
            #expect(mail.authenticatedAs == Self.user)
            #expect(normalized(mail.body) == Self.message.body)
        }
    }

    @Test("STARTTLS refuses a self-signed certificate when verification is on")
    func startTLSVerifiesCertificates() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        try await withSink(["--tls-cert", certificate.certificatePath, "--tls-key", certificate.keyPath]) { sink in
            let sender = makeSender(sink, security: .startTLS)
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.contains("certificate verification failed") == true, "\(error?.reason ?? "")")
            let delivered = try sink.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("STARTTLS configured but not offered: nothing is sent in plain text")
    func startTLSMissingIsRefused() async throws {
        try await withSink([]) { sink in
            let sender = makeSender(sink, security: .startTLS, username: Self.user, password: Self.password)
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.message) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.contains("STARTTLS") == true)
            let delivered = try sink.messages()
            #expect(delivered.isEmpty)
        }
    }

    @Test("550 for the recipient is permanent and the reason hides the address")
    func rejectedRecipientIsPermanent() async throws {
        try await withSink([]) { sink in
            var message = Self.message
            message.to = "nobody@reject.invalid"
            let error = await #expect(throws: DeliveryError.self) {
                try await makeSender(sink, security: .none).send(message)
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
        try await withSink([]) { sink in
            var message = Self.message
            message.to = "someone@busy.invalid"
            let error = await #expect(throws: DeliveryError.self) {
                try await makeSender(sink, security: .none).send(message)
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
        _ sink: SMTPSink,
        security: SMTPConfiguration.Security,
        username: String? = nil,
        password: String? = nil,
        certificateVerification: Bool = true
    ) -> SMTPEmailSender {
        SMTPEmailSender(
            configuration: SMTPConfiguration(
                host: "127.0.0.1",
                port: sink.port,
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

    /// Line endings as Python's email package may hand them back, made comparable.
    private func normalized(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// Runs `body` against a fresh sink, and kills the sink however `body` ends.
    private func withSink(_ arguments: [String], _ body: (SMTPSink) async throws -> Void) async throws {
        let sink = try await SMTPSink.start(arguments)
        do {
            try await body(sink)
        } catch {
            await sink.stop()
            throw error
        }
        await sink.stop()
    }
}

/// One message as the sink recorded it.
private struct ReceivedMail: Decodable, Sendable {
    var mailFrom: String
    var rcptTos: [String]
    var data: String
    var subject: String?
    var body: String
    var messageID: String
    var authenticatedAs: String?
    var tls: Bool

    enum CodingKeys: String, CodingKey {
        case mailFrom = "mail_from"
        case rcptTos = "rcpt_tos"
        case data, subject, body
        case messageID = "message_id"
        case authenticatedAs = "authenticated_as"
        case tls
    }
}

private struct SMTPSinkError: Error, CustomStringConvertible {
    var description: String
}

/// A running `smtp_sink.py`. Not Sendable: each test owns its own and stops it before returning.
private final class SMTPSink {
    let port: Int
    private let process: Process
    private let directory: URL
    private let outputURL: URL

    private init(port: Int, process: Process, directory: URL, outputURL: URL) {
        self.port = port
        self.process = process
        self.directory = directory
        self.outputURL = outputURL
    }

    /// Tests/Support/smtp_sink.py, found from this file; symlinks resolved so a scratch package linking this file works.
    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support").appendingPathComponent("smtp_sink.py").path
    }

    static func start(_ arguments: [String]) async throws -> SMTPSink {
        // A missing aiosmtpd must fail loudly: CI installs it, and a skipped test would hide a broken setup.
        let check = try await runToCompletion("/usr/bin/env", ["python3", "-c", "import aiosmtpd"])
        try #require(
            check.status == 0,
            "python3 cannot import aiosmtpd, which the SMTP tests need: run `pip install aiosmtpd`. \(check.output)"
        )

        let directory = try makeTemporaryDirectory()
        let outputURL = directory.appendingPathComponent("messages.jsonl")
        let stdoutURL = directory.appendingPathComponent("stdout.txt")
        let stderrURL = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath, "--port", "0", "--output", outputURL.path] + arguments
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()

        // Polls the output file rather than blocking on a pipe, so no test thread ever waits on a read.
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let printed = (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? ""
            if let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("READY ") }),
                let port = Int(line.dropFirst("READY ".count).trimmingCharacters(in: .whitespaces))
            {
                return SMTPSink(port: port, process: process, directory: directory, outputURL: outputURL)
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                await stopProcess(process)
                let errors = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
                try? FileManager.default.removeItem(at: directory)
                throw SMTPSinkError(description: "smtp_sink.py did not start: \(errors)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Every message received so far, oldest first.
    func messages() throws -> [ReceivedMail] {
        guard FileManager.default.fileExists(atPath: outputURL.path) else { return [] }
        let text = try String(contentsOf: outputURL, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try JSONDecoder().decode(ReceivedMail.self, from: Data(line.utf8))
        }
    }

    func stop() async {
        await stopProcess(process)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A throwaway certificate for 127.0.0.1 made with the `openssl` CLI.
private struct SelfSignedCertificate: Sendable {
    var directory: URL
    var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    var keyPath: String { directory.appendingPathComponent("key.pem").path }

    static func make() async throws -> SelfSignedCertificate {
        let certificate = SelfSignedCertificate(directory: try makeTemporaryDirectory())
        let result = try await runToCompletion(
            "/usr/bin/env",
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", certificate.keyPath, "-out", certificate.certificatePath, "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ]
        )
        try #require(result.status == 0, "openssl could not make a test certificate: \(result.output)")
        return certificate
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

private func makeTemporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verity-smtp-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Runs a short command to the end, polling instead of blocking a thread, and returns its status and output.
private func runToCompletion(_ executable: String, _ arguments: [String]) async throws -> (
    status: Int32, output: String
) {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let outputURL = directory.appendingPathComponent("output.txt")
    _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
    let output = try FileHandle(forWritingTo: outputURL)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let deadline = ContinuousClock.now + .seconds(60)
    while process.isRunning, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
    }
    await stopProcess(process)
    try output.close()
    return (process.terminationStatus, (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
}

/// Ends `process`: SIGTERM first, SIGKILL if it lingers. Polls instead of `waitUntilExit()`, which on Linux spins a
/// run loop on the calling thread and never returns if the child ignores SIGTERM.
private func stopProcess(_ process: Process) async {
    guard process.isRunning else { return }
    process.terminate()
    if await waitForExit(process, within: .seconds(2)) { return }
    kill(process.processIdentifier, SIGKILL)
    _ = await waitForExit(process, within: .seconds(5))
}

private func waitForExit(_ process: Process, within limit: Duration) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while process.isRunning, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(20))
    }
    return !process.isRunning
}
