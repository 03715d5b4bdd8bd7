import Foundation

/// A passkey factor (`YF…`) of a Twilio entity: unverified from its creation until its registration is answered, then
/// the Verity passkey that answer made.
struct TwilioPasskeyFactor: Sendable, Equatable {
    var sid: String
    var entity: TwilioEntityAddress
    /// The Verity user behind the entity's passkeys.
    var userId: String
    /// The passkey (`pky_…`) once verified.
    var passkeyId: String?
    var friendlyName: String
    /// The relying party of its ceremonies: its `config` over its service's settings, fixed at creation.
    var settings: PasskeySettings
    var createdAt: Date
    var updatedAt: Date

    /// `verified` once its registration was answered, `unverified` before.
    var status: String { passkeyId == nil ? "unverified" : "verified" }
}
