import VerityCore

/// One rendered message, ready for a carrier or a mail server.
public struct OutgoingMessage: Sendable, Equatable {
    /// The outbox message id (`msg_…`); stable across retries, so senders can use it as an idempotency key.
    public var id: String
    public var channel: Channel
    /// An E.164 number for SMS, an address for email.
    public var to: String
    /// The subject line (email only).
    public var subject: String?
    /// The full text, code included.
    public var body: String

    public init(id: String, channel: Channel, to: String, subject: String? = nil, body: String) {
        self.id = id
        self.channel = channel
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// Delivers messages of one channel. The outbox worker calls it and retries on failure.
public protocol MessageSender: Sendable {
    /// Sends one message. Throws a ``DeliveryError``: `.permanent` stops retries, anything else is retried.
    func send(_ message: OutgoingMessage) async throws
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
