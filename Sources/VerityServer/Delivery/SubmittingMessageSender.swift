import VerityCore

/// A sender whose provider names each message it accepts: sending is submitting and letting the id go.
public protocol SubmittingMessageSender: MessageSender {}

extension SubmittingMessageSender {
    /// Sends one message. Throws a ``DeliveryError``, or `CancellationError` when the task is cancelled.
    public func send(_ message: OutgoingMessage) async throws {
        _ = try await submit(message)
    }
}
