import Foundation
import SQLKit

/// A webhook (`YW…`) of a Twilio service.
struct TwilioWebhook: Sendable, Equatable {
    var sid: String
    var serviceSid: String
    var friendlyName: String
    /// `*`, or some of `factor.created`, `factor.verified`, `factor.deleted`, `challenge.approved`, `challenge.denied`.
    var eventTypes: [String]
    var url: String
    var enabled: Bool
    var version: String
    var createdAt: Date
    var updatedAt: Date
}
