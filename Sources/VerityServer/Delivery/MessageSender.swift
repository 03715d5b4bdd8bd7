import VerityCore

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
