import Foundation
import VerityCore

/// What the console's dashboard shows about codes: per day and channel, and per country.
struct VerificationActivityReport: Sendable {
    /// One day's (or one country's) counts.
    struct Counts: Sendable, Equatable {
        var started = 0
        var approved = 0
        /// Ended without approval: canceled, expired or dead of wrong codes.
        var failed = 0
        /// Dead of too many wrong codes (a limit hit).
        var limitsHit = 0

        /// Approved out of those started, 0 to 1 (0 when none started).
        var conversion: Double { started == 0 ? 0 : Double(approved) / Double(started) }

        mutating func add(_ status: VerificationStatus, _ count: Int) {
            started += count
            switch status {
            case .approved: approved += count
            case .canceled, .expired: failed += count
            case .maxAttemptsReached:
                failed += count
                limitsHit += count
            case .pending: break
            }
        }
    }

    /// The first day shown (days since 1970-01-01 UTC), and `days` of them.
    var firstDay: Int
    var days: Int
    /// Counts by day (offset from `firstDay`) for each channel.
    var byChannel: [Channel: [Counts]]
    /// Counts by the region (ISO 3166 code) of phone destinations.
    var byCountry: [(region: String, counts: Counts)]

    /// Everything on one day, all channels together.
    func total(day: Int) -> Counts {
        var total = Counts()
        for counts in byChannel.values {
            total.started += counts[day].started
            total.approved += counts[day].approved
            total.failed += counts[day].failed
            total.limitsHit += counts[day].limitsHit
        }
        return total
    }
}
