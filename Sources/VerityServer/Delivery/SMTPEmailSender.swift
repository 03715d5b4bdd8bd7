import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import VerityCore

/// How to reach and authenticate to the mail server that relays verification emails.
public struct SMTPConfiguration: Sendable {
    /// How the connection to the mail server is protected.
    public enum Security: Sendable, Equatable {
        /// Plain text from start to end. Credentials, if any, then travel unencrypted: choose this only on
        /// purpose, e.g. for a relay on localhost.
        case none
        /// Connect in plain text, then upgrade with `STARTTLS` before anything else (usually port 587).
        /// Fails rather than continuing unencrypted when the server does not offer it.
        case startTLS
        /// Implicit TLS from the first byte (usually port 465).
        case tls
    }

    /// The mail server's host name or IP address.
    public var host: String
    /// The mail server's port.
    public var port: Int
    /// The user name for `AUTH PLAIN`; authentication happens only when both it and ``password`` are set.
    public var username: String?
    /// The password for `AUTH PLAIN`. Never logged, never part of an error.
    public var password: String?
    /// The sender: a bare address (`codes@example.com`) or a mailbox with a display name
    /// (`Example <codes@example.com>`).
    public var from: String
    /// How the connection is protected.
    public var security: Security
    /// Whether the server's certificate must chain to a trusted root and match ``host``.
    /// Turn off only for tests or a self-signed relay you control.
    public var certificateVerification: Bool
    /// The longest a whole send (connect, conversation and upload) may take before it fails as transient.
    public var timeout: Duration
    /// The name this client gives in `EHLO`.
    public var heloName: String

    /// Creates a configuration.
    ///
    /// - Parameter port: the server's port; nil picks the usual one for `security`: 465 for `.tls`, else 587.
    public init(
        host: String,
        port: Int? = nil,
        username: String? = nil,
        password: String? = nil,
        from: String,
        security: Security = .startTLS,
        certificateVerification: Bool = true,
        timeout: Duration = .seconds(30),
        heloName: String = "localhost"
    ) {
        self.host = host
        self.port = port ?? (security == .tls ? 465 : 587)
        self.username = username
        self.password = password
        self.from = from
        self.security = security
        self.certificateVerification = certificateVerification
        self.timeout = timeout
        self.heloName = heloName
    }
}

extension SMTPConfiguration: CustomStringConvertible, CustomReflectable {
    /// A summary that leaves the password out, so logging a configuration cannot leak it.
    public var description: String {
        let credentials = username.map { "\($0):<redacted>@" } ?? ""
        return "smtp://\(credentials)\(host):\(port) (\(security), from \(from))"
    }

    /// Keeps the password out of `dump` and debugger output as well.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host, "port": port, "username": username as Any, "password": "<redacted>", "from": from,
                "security": security, "certificateVerification": certificateVerification, "timeout": timeout,
                "heloName": heloName,
            ]
        )
    }
}

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

/// Checks and takes apart the addresses that go into the envelope and headers.
enum SMTPAddress {
    /// Characters that would close the `<…>` path, start another header field or need quoting.
    private static let forbidden = Set("<>()[]\\,;:\"@".utf8)

    /// Whether `address` is a plain `local@domain` mailbox of printable ASCII, safe to put verbatim into
    /// `RCPT TO:<…>` and a header. Anything else (spaces, CR/LF, quoting, non-ASCII) is refused rather than
    /// escaped, which also rules out command and header injection.
    static func isValid(_ address: String) -> Bool {
        let bytes = Array(address.utf8)
        guard bytes.count <= 254, let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard !local.isEmpty, local.count <= 64, !domain.isEmpty else { return false }
        return (local + domain).allSatisfy { $0 > 0x20 && $0 < 0x7F && !forbidden.contains($0) }
    }

    /// The part after the `@`: the only piece of an address that may be logged.
    static func domain(of address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return "" }
        return String(address[address.index(after: at)...])
    }

    /// Splits `Name <address>`, `"Name" <address>` or a bare address; nil when the address is not valid.
    static func parseMailbox(_ text: String) -> (name: String?, address: String)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            return isValid(trimmed) ? (nil, trimmed) : nil
        }
        let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast())
                .replacingOccurrences(of: "\\\"", with: "\"")
                .replacingOccurrences(of: "\\\\", with: "\\")
        }
        guard isValid(address) else { return nil }
        return (name.isEmpty ? nil : name, address)
    }

    /// Whether `name` is a domain name or address literal, so `EHLO` cannot carry anything else.
    static func isValidHeloName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
                    UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"):
                    return true
                default:
                    return false
                }
            }
    }
}

/// Renders an ``OutgoingMessage`` as an RFC 5322 / MIME message ready for `DATA`.
enum SMTPMessageFormat {
    /// Raw bytes per encoded word: 42 bytes make 56 base64 characters, so `Subject: =?UTF-8?B?…?=` stays
    /// within the recommended 78 columns and under the 75 that RFC 2047 allows per word.
    static let encodedWordBytes = 42
    /// Base64 body lines, as RFC 2045 prescribes.
    static let base64LineLength = 76

    /// The whole `DATA` payload: headers, blank line, base64 body, dot-stuffed, CRLF line endings, ending in CRLF
    /// (the caller adds the terminating `.`).
    static func render(
        _ message: OutgoingMessage,
        from sender: (name: String?, address: String),
        date: Date,
        messageIDDomain: String
    ) -> String {
        var lines: [String] = []
        let fromValue = sender.name.map { "\(phrase($0)) <\(sender.address)>" } ?? sender.address
        lines.append("From: \(fromValue)")
        lines.append("To: \(message.to)")
        if let subject = message.subject {
            lines.append(contentsOf: "Subject: \(unstructured(subject))".components(separatedBy: "\r\n"))
        }
        lines.append("Date: \(rfc5322Date(date))")
        lines.append("Message-ID: \(messageID(for: message.id, domain: messageIDDomain))")
        // RFC 3834: tells autoresponders and vacation replies not to answer a one-time-code mail.
        lines.append("Auto-Submitted: auto-generated")
        lines.append("MIME-Version: 1.0")
        lines.append("Content-Type: text/plain; charset=UTF-8")
        // Base64 keeps any UTF-8 text 7-bit clean, so no 8BITMIME/SMTPUTF8 support is needed on the way.
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines.append(contentsOf: base64Lines(canonicalText(message.body)))
        return dotStuffed(lines).map { $0 + "\r\n" }.joined()
    }

    /// Doubles a leading `.` on each line (RFC 5321 §4.5.2), so no line can end the `DATA` early.
    static func dotStuffed(_ lines: [String]) -> [String] {
        lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }
    }

    /// Text with every line break (LF, CR or CRLF) as CRLF: the canonical form of `text/plain` (RFC 2046).
    static func canonicalText(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    /// The UTF-8 bytes of `text` in base64, cut into lines of 76 characters.
    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var rest = Substring(encoded)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(base64LineLength)))
            rest = rest.dropFirst(base64LineLength)
        }
        return lines
    }

    /// An unstructured header value (Subject): as is when it is short printable ASCII, otherwise RFC 2047
    /// encoded words folded onto continuation lines.
    static func unstructured(_ text: String) -> String {
        let oneLine = text.replacingOccurrences(of: "\r\n", with: " ")
            .replacingOccurrences(of: "\r", with: " ")
            .replacingOccurrences(of: "\n", with: " ")
        let isPlain = oneLine.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        // "=?" could be mistaken for the start of an encoded word; very long lines would break the 998 limit.
        if isPlain, !oneLine.contains("=?"), oneLine.utf8.count <= 900 { return oneLine }
        return encodedWords(oneLine)
    }

    /// A display name: bare when it is made of atoms, quoted when it has specials, encoded when not ASCII.
    static func phrase(_ name: String) -> String {
        let oneLine = name.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        guard oneLine.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), !oneLine.contains("=?") else {
            return encodedWords(oneLine)
        }
        let atext = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~ ".utf8)
        if oneLine.utf8.allSatisfy({ atext.contains($0) }) { return oneLine }
        let escaped = oneLine.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// `=?UTF-8?B?…?=` words joined by folding whitespace (which decoders drop between encoded words).
    ///
    /// Words break between characters, never inside one, since RFC 2047 requires each word to decode on its own.
    static func encodedWords(_ text: String) -> String {
        var units: [[UInt8]] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if bytes.count <= encodedWordBytes {
                units.append(bytes)
            } else {
                // A grapheme cluster too long for one word: split between its scalars, which still decode alone.
                units.append(contentsOf: character.unicodeScalars.map { Array(String($0).utf8) })
            }
        }
        var words: [String] = []
        var chunk: [UInt8] = []
        for unit in units {
            if !chunk.isEmpty, chunk.count + unit.count > encodedWordBytes {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += unit
        }
        words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
        return words.joined(separator: "\r\n ")
    }

    /// `Message-ID` from the outbox id, so every retry of one message carries the same id and receivers can
    /// drop duplicates.
    static func messageID(for id: String, domain: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)
        let local = String(decoding: id.utf8.map { allowed.contains($0) ? $0 : UInt8(ascii: "-") }, as: UTF8.self)
        return "<\(local.isEmpty ? "message" : local)@\(domain.isEmpty ? "localhost" : domain)>"
    }

    /// The date in RFC 5322 form, e.g. `Mon, 05 Jan 2026 09:30:00 +0000`.
    static func rfc5322Date(_ date: Date) -> String {
        // A fresh formatter per call: DateFormatter is not Sendable, and sends are far too rare for this to matter.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }
}
