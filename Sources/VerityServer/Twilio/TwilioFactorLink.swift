import Foundation
import VerityCore

/// The Twilio side of a Verity factor: the service and entity it belongs to, and what only Twilio has.
struct TwilioFactorLink: Sendable, Equatable {
    var factorId: String
    var serviceSid: String
    var identity: String
    /// TOTP codes are accepted this many steps early or late.
    var totpSkew: Int?
    var updatedAt: Date

    /// The steps either side of now a TOTP factor takes codes from: its skew, or Twilio's default.
    var totpWindow: Int { totpSkew ?? FactorDialect.twilio.defaultTOTPWindow }
}
