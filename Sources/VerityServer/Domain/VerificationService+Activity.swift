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
    /// Counts by the region (ISO 3166 code, or the calling code when no region is known) of phone destinations.
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

extension VerificationService {
    /// The last `days` days of verifications of every project, for the console's dashboard.
    func activity(days: Int) async throws -> VerificationActivityReport {
        let today = Int((clock.now().timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        let since = Date(timeIntervalSince1970: Double(firstDay) * 86_400)
        async let daily = store.activity(since: since)
        async let prefixes = store.prefixActivity(since: since)
        var byChannel: [Channel: [VerificationActivityReport.Counts]] = [:]
        for row in try await daily where (0..<days).contains(row.day - firstDay) {
            byChannel[row.channel, default: Array(repeating: .init(), count: days)][row.day - firstDay].add(
                row.status, row.count)
        }
        var byRegion: [String: VerificationActivityReport.Counts] = [:]
        for row in try await prefixes {
            let region = (try? PhoneNumber(parsing: row.sample)).map { $0.regionCode ?? "+\($0.countryCallingCode)" }
            byRegion[region ?? "?", default: .init()].add(row.status, row.count)
        }
        return VerificationActivityReport(
            firstDay: firstDay, days: days, byChannel: byChannel,
            byCountry: byRegion.sorted { ($0.value.started, $1.key) > ($1.value.started, $0.key) }.map {
                ($0.key, $0.value)
            })
    }

    /// A page of verifications of every project (or of `projectId`), newest first; `search` is a destination (a
    /// phone number or an email address) or a verification id.
    func recent(projectId: String?, search: String?, cursor: String?, limit: Int = 50) async throws
        -> (items: [VerificationRecord], nextCursor: String?)
    {
        try Paging.requireCursor(cursor, prefix: "ver_")
        if let search, search.hasPrefix("ver_") {
            let found = try await store.verification(id: search)
            return (found.map { [$0] } ?? [], nil)
        }
        let key = try search.map { try Destination(loginId: $0).key }
        let fetched = try await store.recent(
            projectId: projectId, destinationKey: key, after: cursor, limit: limit + 1)
        let items = Array(fetched.prefix(limit))
        return (items, fetched.count > limit ? items.last?.id : nil)
    }
}
