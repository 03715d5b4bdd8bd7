import Foundation
import VerityCore

/// An entity (`YE…`) of a Twilio service: the customer's opaque `identity`, which is the Verity user id of the
/// entity's factors and challenges.
struct TwilioEntity: Sendable, Equatable {
    var sid: String
    var serviceSid: String
    var identity: String
    var createdAt: Date
    var updatedAt: Date
}
