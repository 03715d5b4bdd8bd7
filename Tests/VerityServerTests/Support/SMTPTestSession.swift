import Foundation
import NIOCore
import NIOSSL

/// The server side of one SMTP connection of ``SMTPTestServer``, from greeting to QUIT (RFC 5321, RFC 3207 STARTTLS,
/// RFC 4954 AUTH with PLAIN and LOGIN).
///
/// Replies keep the wording of aiosmtpd, the server these tests first ran against. Not `Sendable`: it owns the inbound
/// iterator, which only the task serving the connection may touch.
struct SMTPTestSession {
    private enum Greeting {
        case helo
        case ehlo
    }

    private let channel: any Channel
    private var lines: SMTPLineReader
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private let credentials: SMTPTestServer.Configuration.Credentials?
    /// The context for STARTTLS; nil when it is not offered.
    private let startTLSContext: NIOSSLContext?
    private let record: @Sendable (ReceivedMail) -> Void

    private var isEncrypted: Bool
    private var greeting: Greeting?
    private var authenticatedAs: String?
    private var mailFrom: String?
    private var rcptTos: [String] = []

    init(
        channel: any Channel,
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        credentials: SMTPTestServer.Configuration.Credentials?,
        startTLS: NIOSSLContext?,
        isEncrypted: Bool,
        record: @escaping @Sendable (ReceivedMail) -> Void
    ) {
        self.channel = channel
        self.lines = SMTPLineReader(inbound)
        self.outbound = outbound
        self.credentials = credentials
        self.startTLSContext = startTLS
        self.isEncrypted = isEncrypted
        self.record = record
    }

    /// Serves commands until QUIT or until the client goes away.
    mutating func run() async throws {
        try await reply("220 \(SMTPTestServer.hostname) ESMTP Verity test server")
        while let line = try await lines.next() {
            let text = String(decoding: line.dropLast(2), as: UTF8.self)
            let verb = text.prefix { $0 != " " }.uppercased()
            let argument = text.drop { $0 != " " }.trimmingCharacters(in: .whitespaces)
            switch verb {
            case "EHLO": try await ehlo(argument)
            case "HELO": try await helo(argument)
            case "STARTTLS": try await startTLS(argument)
            case "AUTH": try await auth(argument)
            case "MAIL": try await mail(argument)
            case "RCPT": try await rcpt(argument)
            case "DATA": try await data(argument)
            case "RSET":
                resetEnvelope()
                try await reply("250 OK")
            case "NOOP": try await reply("250 OK")
            case "QUIT":
                try await reply("221 Bye")
                return
            default: try await reply("500 Error: command \"\(verb)\" not recognized")
            }
        }
    }

    // MARK: - Commands

    private mutating func ehlo(_ argument: String) async throws {
        guard !argument.isEmpty else { return try await reply("501 Syntax: EHLO hostname") }
        greeting = .ehlo
        resetEnvelope()
        var keywords = [SMTPTestServer.hostname, "8BITMIME"]
        if startTLSContext != nil, !isEncrypted { keywords.append("STARTTLS") }
        if credentials != nil, authenticationAllowed { keywords.append("AUTH LOGIN PLAIN") }
        keywords.append("HELP")
        try await reply(code: 250, keywords)
    }

    private mutating func helo(_ argument: String) async throws {
        guard !argument.isEmpty else { return try await reply("501 Syntax: HELO hostname") }
        greeting = .helo
        resetEnvelope()
        try await reply("250 \(SMTPTestServer.hostname)")
    }

    private mutating func startTLS(_ argument: String) async throws {
        guard argument.isEmpty else { return try await reply("501 Syntax: STARTTLS") }
        guard let context = startTLSContext, !isEncrypted else { return try await reply("454 TLS not available") }
        let channel = self.channel
        // The 220 is written and the TLS handler put under it in one event-loop turn: the 220 must leave in plain
        // text, and the client's first TLS bytes, which it sends only after reading the 220, must meet the handler.
        // (A write through `outbound` would be queued for a later turn and could end up encrypted.)
        try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            let written = channel.writeAndFlush(ByteBuffer(string: "220 Ready to start TLS\r\n"))
            do {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context), position: .first)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return written
        }.get()
        // RFC 3207 §4.2: forget everything from before the upgrade, including any plain text the client pipelined.
        lines.discardBuffered()
        isEncrypted = true
        greeting = nil
        authenticatedAs = nil
        resetEnvelope()
    }

    private mutating func auth(_ argument: String) async throws {
        guard let greeting else { return try await reply("503 Error: send EHLO first") }
        guard greeting == .ehlo, let credentials else {
            return try await reply("500 Error: command \"AUTH\" not recognized")
        }
        guard authenticationAllowed else {
            return try await reply("538 5.7.11 Encryption required for requested authentication mechanism")
        }
        guard authenticatedAs == nil else { return try await reply("503 Already authenticated") }
        let words = argument.split(separator: " ").map(String.init)
        guard let mechanism = words.first?.uppercased() else { return try await reply("501 Not enough value") }
        guard words.count <= 2 else { return try await reply("501 Too many values") }
        let initialResponse = words.count == 2 ? words[1] : nil

        let login: [UInt8]
        let password: [UInt8]
        switch mechanism {
        case "PLAIN":
            // RFC 4616: authzid NUL authcid NUL passwd; the authorization identity is ignored.
            guard let message = try await response(initialResponse, challenge: "") else { return }
            let parts = message.split(separator: 0, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return try await reply("501 5.5.2 Can't split auth value") }
            (login, password) = (Array(parts[1]), Array(parts[2]))
        case "LOGIN":
            guard let user = try await response(initialResponse, challenge: "User Name\0"),
                let secret = try await response(nil, challenge: "Password\0")
            else { return }
            (login, password) = (user, secret)
        default:
            return try await reply("504 5.5.4 Unrecognized authentication type")
        }
        guard login == Array(credentials.user.utf8), password == Array(credentials.password.utf8) else {
            return try await reply("535 5.7.8 Authentication credentials invalid")
        }
        authenticatedAs = credentials.user
        try await reply("235 2.7.0 Authentication successful")
    }

    /// The decoded client response: `initial` when the client sent one with AUTH, else its answer to a `334`
    /// challenge. Nil when the client cancelled or sent bad base64, which is answered here.
    private mutating func response(_ initial: String?, challenge: String) async throws -> [UInt8]? {
        var encoded = initial
        if encoded == nil {
            try await reply("334 " + Data(challenge.utf8).base64EncodedString())
            guard let line = try await lines.next() else { throw SMTPTestSessionError.connectionClosed }
            encoded = String(decoding: line.dropLast(2), as: UTF8.self)
        }
        guard let encoded, encoded != "*" else {
            try await reply("501 5.7.0 Auth aborted")
            return nil
        }
        // RFC 4954: "=" stands for an empty initial response.
        if encoded == "=" { return [] }
        guard let decoded = Data(base64Encoded: encoded) else {
            try await reply("501 5.5.2 Can't decode base64")
            return nil
        }
        return Array(decoded)
    }

    private mutating func mail(_ argument: String) async throws {
        guard greeting != nil else { return try await reply("503 Error: send HELO first") }
        guard credentials == nil || authenticatedAs != nil else {
            return try await reply("530 5.7.0 Authentication required")
        }
        guard mailFrom == nil else { return try await reply("503 Error: nested MAIL command") }
        guard let address = Self.path(after: "FROM:", in: argument) else {
            return try await reply("501 Syntax: MAIL FROM: <address>")
        }
        mailFrom = address
        try await reply("250 OK")
    }

    private mutating func rcpt(_ argument: String) async throws {
        guard greeting != nil else { return try await reply("503 Error: send HELO first") }
        guard credentials == nil || authenticatedAs != nil else {
            return try await reply("530 5.7.0 Authentication required")
        }
        guard mailFrom != nil else { return try await reply("503 Error: need MAIL command") }
        guard let address = Self.path(after: "TO:", in: argument), !address.isEmpty else {
            return try await reply("501 Syntax: RCPT TO: <address>")
        }
        // The failures the tests provoke: a permanent and a temporary refusal of one recipient.
        if address.lowercased().hasSuffix("@reject.invalid") {
            return try await reply("550 5.1.1 Mailbox unavailable")
        }
        if address.lowercased().hasSuffix("@busy.invalid") {
            return try await reply("451 4.3.0 Try again later")
        }
        rcptTos.append(address)
        try await reply("250 OK")
    }

    private mutating func data(_ argument: String) async throws {
        guard greeting != nil else { return try await reply("503 Error: send HELO first") }
        guard credentials == nil || authenticatedAs != nil else {
            return try await reply("530 5.7.0 Authentication required")
        }
        guard let mailFrom, !rcptTos.isEmpty else { return try await reply("503 Error: need RCPT command") }
        guard argument.isEmpty else { return try await reply("501 Syntax: DATA") }
        try await reply("354 End data with <CR><LF>.<CR><LF>")

        // RFC 5321 §4.5.2: a line of a single "." ends the data; any other leading "." was doubled by the client.
        var content: [UInt8] = []
        while true {
            guard let line = try await lines.next() else { throw SMTPTestSessionError.connectionClosed }
            if line.elementsEqual(".\r\n".utf8) { break }
            content += line.first == UInt8(ascii: ".") ? line.dropFirst() : line[...]
        }
        // Asked of the pipeline rather than remembered: a TLS handler under this session is what makes the bytes
        // encrypted, so the record cannot claim TLS that the connection did not have.
        let tls = (try? await channel.pipeline.containsHandler(type: NIOSSLServerHandler.self).get()) != nil
        // Recorded before the 250, so a client that has seen success always finds the message recorded.
        record(
            ReceivedMail(
                mailFrom: mailFrom, rcptTos: rcptTos, data: content, authenticatedAs: authenticatedAs, tls: tls)
        )
        resetEnvelope()
        try await reply("250 OK")
    }

    // MARK: - Helpers

    /// AUTH is allowed in plain text only when the server offers no TLS at all; otherwise only once encrypted.
    private var authenticationAllowed: Bool {
        isEncrypted || startTLSContext == nil
    }

    private mutating func resetEnvelope() {
        mailFrom = nil
        rcptTos = []
    }

    /// The address inside `<…>` after `keyword` (case-insensitive), ignoring any ESMTP parameters after it.
    private static func path(after keyword: String, in argument: String) -> String? {
        guard argument.prefix(keyword.count).uppercased() == keyword else { return nil }
        let rest = argument.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)
        guard rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") else { return nil }
        return String(rest[rest.index(after: rest.startIndex)..<close])
    }

    private func reply(_ line: String) async throws {
        try await outbound.write(ByteBuffer(string: line + "\r\n"))
    }

    /// A reply of several lines: `250-…` for all but the last, `250 …` for the last.
    private func reply(code: Int, _ lines: [String]) async throws {
        let text = lines.enumerated().map { index, line in
            "\(code)\(index == lines.count - 1 ? " " : "-")\(line)\r\n"
        }.joined()
        try await outbound.write(ByteBuffer(string: text))
    }
}

enum SMTPTestSessionError: Error {
    /// The client went away in the middle of a command (AUTH challenge or DATA).
    case connectionClosed
    /// A line longer than ``SMTPLineReader/maximumLineLength``.
    case lineTooLong
}

/// Cuts the bytes a client sends into lines that end in CRLF, as RFC 5321 defines them: a bare LF does not end a
/// line, so it stays inside the line and the tests can catch it in the recorded data.
struct SMTPLineReader {
    /// Far above anything the sender writes (RFC 5321 allows 1000 octets); only bounds memory.
    static let maximumLineLength = 1 << 20

    private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private var buffer: [UInt8] = []
    /// Where to resume the search for CRLF, so a long line arriving in many reads is not scanned from the start
    /// each time.
    private var searched = 0

    init(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>) {
        iterator = inbound.makeAsyncIterator()
    }

    /// The next line, its CRLF included, or nil once the client has closed (a partial last line is dropped).
    mutating func next() async throws -> [UInt8]? {
        while true {
            while searched + 1 < buffer.count {
                if buffer[searched] == UInt8(ascii: "\r"), buffer[searched + 1] == UInt8(ascii: "\n") {
                    let line = Array(buffer[...(searched + 1)])
                    buffer.removeFirst(searched + 2)
                    searched = 0
                    return line
                }
                searched += 1
            }
            guard buffer.count <= Self.maximumLineLength else { throw SMTPTestSessionError.lineTooLong }
            guard let chunk = try await iterator.next() else { return nil }
            buffer += chunk.readableBytesView
        }
    }

    /// Drops bytes received but not yet returned as lines.
    mutating func discardBuffered() {
        buffer = []
        searched = 0
    }
}
