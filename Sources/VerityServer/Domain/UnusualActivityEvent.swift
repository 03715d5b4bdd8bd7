import Foundation
import Logging
import VerityCore

/// The webhook event a report of unusual activity sends (`security.unusual_activity_reported`).
struct UnusualActivityEvent: Codable, Sendable {
    struct Report: Codable, Sendable {
        /// The ``SecurityEvent`` recorded (`sev_…`).
        var securityEventId: String
        var reason: DenyReason
        /// What the project did about it.
        var response: UnusualActivityResponse
        var factorId: String
        /// The challenge the device denied.
        var challenge: Challenge
    }

    var id: String
    var type: String
    var createdAt: Date
    var data: Report
}
