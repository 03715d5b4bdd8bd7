import Foundation
import Logging
import VerityCore

/// A webhook event about a challenge.
struct ChallengeEvent: Codable, Sendable {
    var id: String
    /// `challenge.approved`, `challenge.denied` or `challenge.expired`.
    var type: String
    var createdAt: Date
    var data: Challenge
}
