import Crypto
import Foundation
import Logging
import VerityCore

/// The secrets that authenticate providers' delivery-status callbacks. Never logged.
public struct DeliveryStatusSettings: Sendable, CustomStringConvertible {
    /// The Meta app's secret, which keys `X-Hub-Signature-256` (`VERITY_WHATSAPP_APP_SECRET`); nil refuses Meta's
    /// callbacks.
    public var metaAppSecret: String?
    /// The token Meta's subscription check (`hub.verify_token`) must carry (`VERITY_WHATSAPP_VERIFY_TOKEN`).
    public var metaVerifyToken: String?
    /// The Twilio auth token, which keys `X-Twilio-Signature` (the Twilio senders' `VERITY_TWILIO_AUTH_TOKEN`); nil
    /// refuses Twilio's callbacks.
    public var twilioAuthToken: String?

    /// Creates settings; all nil refuses every callback.
    public init(metaAppSecret: String? = nil, metaVerifyToken: String? = nil, twilioAuthToken: String? = nil) {
        self.metaAppSecret = metaAppSecret
        self.metaVerifyToken = metaVerifyToken
        self.twilioAuthToken = twilioAuthToken
    }

    /// Says which secrets are set, never what they are.
    public var description: String {
        func set(_ value: String?) -> String { value == nil ? "nil" : "<redacted>" }
        return "DeliveryStatusSettings(metaAppSecret: \(set(metaAppSecret)), metaVerifyToken: "
            + "\(set(metaVerifyToken)), twilioAuthToken: \(set(twilioAuthToken)))"
    }
}
