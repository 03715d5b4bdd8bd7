import VerityCore

/// One rendered message, ready for a carrier, a mail server, a voice provider or WhatsApp.
public struct OutgoingMessage: Sendable, Equatable {
    /// The outbox message id (`msg_…`); stable across retries, so senders can use it as an idempotency key.
    public var id: String
    public var channel: Channel
    /// An E.164 number for SMS, calls and WhatsApp, an address for email.
    public var to: String
    /// The subject line (email only).
    public var subject: String?
    /// The full text, code included; for a call, the lines it says, one per line.
    public var body: String
    /// The code alone, for providers that put it into a template of their own (WhatsApp's authentication templates).
    public var code: String?
    /// The language the message is written in (`en`, `es`, `fr`, `de`, `pt`, `ja`).
    public var language: String
    /// What a call says (voice only).
    public var speech: Speech?

    /// What a call says: each line in turn, with a pause between them, in a text-to-speech voice of `language`.
    public struct Speech: Sendable, Equatable {
        /// The voice's language as a BCP 47 tag with a region, such as `en-US` (Twilio's `<Say language>`).
        public var language: String
        /// The lines said in turn: the code digit by digit, then, after a pause, a line that repeats it.
        public var lines: [String]

        public init(language: String, lines: [String]) {
            self.language = language
            self.lines = lines
        }
    }

    public init(
        id: String, channel: Channel, to: String, subject: String? = nil, body: String, code: String? = nil,
        language: String = "en", speech: Speech? = nil
    ) {
        self.id = id
        self.channel = channel
        self.to = to
        self.subject = subject
        self.body = body
        self.code = code
        self.language = language
        self.speech = speech
    }
}

/// Delivers messages of one channel. The outbox worker calls it and retries on failure.
public protocol MessageSender: Sendable {
    /// Sends one message. Throws a ``DeliveryError``: `.permanent` stops retries, anything else is retried.
    func send(_ message: OutgoingMessage) async throws

    /// Sends one message like ``send(_:)`` and returns the provider's id for it (Meta's `wamid.…`, Twilio's `SM…` or
    /// `CA…`), which the provider's delivery-status callbacks name later; nil when the provider has none.
    func submit(_ message: OutgoingMessage) async throws -> String?
}

extension MessageSender {
    /// Senders whose providers report no later delivery status have no id worth keeping.
    public func submit(_ message: OutgoingMessage) async throws -> String? {
        try await send(message)
        return nil
    }
}

/// Why a message could not be delivered.
public struct DeliveryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case transient, permanent }
    public var kind: Kind
    /// A short reason for the outbox record and the logs. Must not contain the message body or secrets.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(kind): \(reason)" }
}

/// A sender whose provider names each message it accepts: sending is submitting and letting the id go.
public protocol SubmittingMessageSender: MessageSender {}

extension SubmittingMessageSender {
    /// Sends one message. Throws a ``DeliveryError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: OutgoingMessage) async throws {
        _ = try await submit(message)
    }
}
