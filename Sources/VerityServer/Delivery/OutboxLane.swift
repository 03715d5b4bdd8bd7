import Foundation
import Logging
import ServiceLifecycle
import VerityCore

/// The outbox's lanes, drained side by side: codes and pushes never wait behind a tenant's slow webhook.
enum OutboxLane: CaseIterable, Sendable {
    /// Codes (SMS, email, calls, WhatsApp), push notifications and app verifications' silent pushes.
    case messages
    /// Tenants' webhook events (Verity's and the Twilio face's), at most ``OutboxConfiguration/webhooksPerProject``
    /// of one project's at once.
    case webhooks

    var channels: [OutboxChannel] {
        switch self {
        case .messages: [.sms, .email, .voice, .whatsapp, .push, .appVerification]
        case .webhooks: [.webhook, .twilioWebhook]
        }
    }
}
