import Foundation
import VerityCore

/// What an outbox message is: a code by SMS, email, call or WhatsApp, a push notification, or a webhook event.
public enum OutboxChannel: String, Sendable, Codable, CaseIterable {
    case sms
    case email
    case voice
    case whatsapp
    case push
    case webhook
    /// A Verify Push event for a Twilio face webhook: form-encoded, signed as Twilio signs (`X-Twilio-Signature`).
    case twilioWebhook = "twilio_webhook"
    /// The silent push that carries an app verification's secret to the app.
    case appVerification = "app_verification"

    /// The code channel this outbox channel carries, if it carries codes.
    var codeChannel: Channel? {
        switch self {
        case .sms: .sms
        case .email: .email
        case .voice: .voice
        case .whatsapp: .whatsapp
        case .push, .webhook, .twilioWebhook, .appVerification: nil
        }
    }
}

/// A message waiting in (or delivered from) the outbox.
public struct OutboxMessage: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable {
        case pending
        case sent
        /// Gave up after too many failures.
        case dead
    }

    public var id: String
    public var projectId: String
    public var channel: OutboxChannel
    /// A phone number or email address; a factor id for a push; a URL for a webhook; an app verification's id.
    public var destination: String
    public var verificationId: String?
    public var locale: String
    /// The JSON body of a push or webhook message (never holds a code).
    public var payload: String?
    public var status: Status
    public var attempts: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    /// Which sender delivered it (`console`, `twilio`, `smtp`, `webhook`, `meta`).
    public var sender: String?
    public var createdAt: Date
    public var sentAt: Date?
    /// The provider's id for the sent message (`wamid.…`, `SM…`, `CA…`), which its delivery-status callbacks name.
    public var providerMessageId: String?
}
