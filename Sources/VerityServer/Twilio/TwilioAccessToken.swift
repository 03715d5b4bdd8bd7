import Foundation
import VerityCore

/// An access token (`YK…`): a Verity enrollment token that lets one device create one push factor.
struct TwilioAccessToken: Sendable, Equatable {
    var sid: String
    var projectId: String
    var serviceSid: String
    var identity: String
    var factorFriendlyName: String?
    var tokenHash: String
    var ttl: Int
    var createdAt: Date
}
