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

extension VerificationService {
    /// The last `days` days of verifications of every project, for the console's dashboard.
    ///
    /// A past day whose verifications have all expired can no longer change, so it is counted once and recorded;
    /// only today (and yesterday, until its last code expires) is counted from the verifications each time.
    func activity(days: Int = Self.activityDays) async throws -> VerificationActivityReport {
        let now = clock.now()
        let today = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        let (counts, lastFinal) = try await recordFinishedDays(days: days, now: now)
        var all = counts
        all += Self.dayCounts(
            try await store.groups(
                from: Self.start(of: max(firstDay, lastFinal + 1)), to: Self.start(of: today + 1)))
        return Self.report(all, firstDay: firstDay, days: days)
    }

    /// How many days the console's dashboard shows.
    static let activityDays = 14

    /// Counts and records each finished day of the last `days` not recorded yet (housekeeping does it, so the
    /// dashboard's first view need not count a fortnight of verifications): the counts of the finished days, and the
    /// last finished day.
    @discardableResult
    func recordFinishedDays(days: Int = Self.activityDays, now: Date? = nil) async throws
        -> (counts: [VerificationDayCount], lastFinal: Int)
    {
        let now = now ?? clock.now()
        let today = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - days + 1
        func start(of day: Int) -> Date { Self.start(of: day) }
        let (recorded, stored) = try await store.dayCounts(from: firstDay, to: today - 1)
        var counts = stored
        // A code lives at most a day: the day before yesterday is final; yesterday once its last code expired.
        var lastFinal = today - 2
        if recorded.contains(today - 1) {
            lastFinal = today - 1
        } else if let latest = try await store.latestExpiry(from: start(of: today - 1), to: start(of: today)) {
            if latest <= now { lastFinal = today - 1 }
        } else {
            lastFinal = today - 1
        }
        let missing = firstDay <= lastFinal ? (firstDay...lastFinal).filter { !recorded.contains($0) } : []
        if let first = missing.first, let last = missing.last {
            let fresh = Self.dayCounts(try await store.groups(from: start(of: first), to: start(of: last + 1)))
                .filter { missing.contains($0.day) }
            try await store.recordDayCounts(fresh, days: missing)
            counts += fresh
        }
        return (counts, lastFinal)
    }

    private static func start(of day: Int) -> Date { Date(timeIntervalSince1970: Double(day) * 86_400) }

    private static func report(_ counts: [VerificationDayCount], firstDay: Int, days: Int)
        -> VerificationActivityReport
    {
        var byChannel: [Channel: [VerificationActivityReport.Counts]] = [:]
        var byRegion: [String: VerificationActivityReport.Counts] = [:]
        for count in counts where (0..<days).contains(count.day - firstDay) {
            byChannel[count.channel, default: Array(repeating: .init(), count: days)][count.day - firstDay].add(
                count.status, count.count)
            if !count.region.isEmpty { byRegion[count.region, default: .init()].add(count.status, count.count) }
        }
        return VerificationActivityReport(
            firstDay: firstDay, days: days, byChannel: byChannel,
            byCountry: byRegion.sorted { ($0.value.started, $1.key) > ($1.value.started, $0.key) }.map {
                ($0.key, $0.value)
            })
    }

    /// Groups counted by region: a phone number's region, read from one number of its group (the group shares the
    /// calling code and the digits that decide the region); none for email.
    static func dayCounts(_ groups: [VerificationGroup]) -> [VerificationDayCount] {
        var regions: [Substring: String] = [:]
        var merged: [String: VerificationDayCount] = [:]
        for group in groups {
            var region = ""
            if group.channel != .email {
                let prefix = group.sample.prefix(6)
                if let known = regions[prefix] {
                    region = known
                } else {
                    region = (try? PhoneNumber(parsing: group.sample))?.regionCode ?? "?"
                    regions[prefix] = region
                }
            }
            let key = "\(group.day) \(group.channel.rawValue) \(group.status.rawValue) \(region)"
            merged[
                key,
                default: .init(day: group.day, channel: group.channel, status: group.status, region: region, count: 0)
            ].count += group.count
        }
        return Array(merged.values)
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
