import Foundation
import VerityCore

/// Gives up on a code message that will never arrive, and sends its code once more by the project's fallback channel
/// when there is one: the one rule for a provider's refusal in its direct answer (``OutboxWorker``) and for its
/// later delivery-status report (``DeliveryStatusReceiver``).
struct CodeFallback: Sendable {
    private let store: OutboxStore
    let verifications: VerificationService

    init(store: OutboxStore, verifications: VerificationService) {
        self.store = store
        self.verifications = verifications
    }

    /// What became of a message given up.
    enum Outcome: Sendable, Equatable {
        /// Given up; its code was queued by this channel.
        case fellBack(Channel)
        /// Given up; nothing more is sent.
        case gaveUp
        /// Someone gave it up before (a repeated report): nothing changed.
        case alreadyGivenUp
    }

    /// Gives up `message` with `reason`; at most once, so its code falls back at most once.
    func giveUp(_ message: OutboxMessage, delivery: OutboxStore.Delivery, reason: String) async throws -> Outcome {
        if let failed = message.channel.codeChannel, let verification = delivery.verification,
            let fallback = VerificationService.fallbackChannel(
                after: failed, of: verification.purpose, fallback: delivery.fallbackChannel,
                disabled: delivery.disabledChannels),
            try await verifications.fallBack(
                failedMessageId: message.id, reason: reason, verificationId: verification.id,
                projectId: message.projectId, to: fallback)
        {
            return .fellBack(fallback)
        }
        return try await store.giveUp(id: message.id, reason: reason) ? .gaveUp : .alreadyGivenUp
    }
}
