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
