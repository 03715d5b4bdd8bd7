import Foundation
import SQLKit
import VerityCore

/// Verifications started on one day, of one channel, in one state, to one region, counted.
struct VerificationDayCount: Sendable, Equatable {
    /// Days since 1970-01-01 (UTC).
    var day: Int
    var channel: Channel
    var status: VerificationStatus
    /// The ISO 3166 region of a phone destination (`?` for one that no longer parses); empty for email.
    var region: String
    var count: Int
}

extension VerificationStore {
    /// Verifications of every project started in `from..<to`, grouped.
    func groups(from: Date, to: Date) async throws -> [VerificationGroup] {
        let day = database.utcDay(of: "created_at")
        return try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(day) AS day, channel, status, MIN(destination) AS sample, COUNT(*) AS n FROM verifications
                WHERE created_at >= \(bind: from.storedValue) AND created_at < \(bind: to.storedValue)
                GROUP BY 1, channel, status, CASE WHEN channel = 'email' THEN '' ELSE substr(destination, 1, 6) END
                """
            ).all().compactMap { row in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                    let status = VerificationStatus(rawValue: try row.decode(column: "status", as: String.self))
                else { return nil }
                return VerificationGroup(
                    day: try row.decode(column: "day", as: Int.self), channel: channel, status: status,
                    sample: try row.decode(column: "sample", as: String.self),
                    count: try row.decode(column: "n", as: Int.self))
            }
        }
    }

    /// When the last of the verifications started in `from..<to` expires (nil when there is none): after that, their
    /// states can no longer change.
    func latestExpiry(from: Date, to: Date) async throws -> Date? {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT MAX(expires_at) AS latest FROM verifications
                WHERE created_at >= \(bind: from.storedValue) AND created_at < \(bind: to.storedValue)
                """
            ).first(decodingColumn: "latest", as: Double?.self).flatMap { $0 }.map(Date.init(timeIntervalSince1970:))
        }
    }

    /// The counts recorded for the days `from...to`, and which of those days are recorded at all.
    func dayCounts(from: Int, to: Int) async throws -> (days: Set<Int>, counts: [VerificationDayCount]) {
        try await database.lookup { sql in
            var days = Set<Int>()
            var counts: [VerificationDayCount] = []
            for row in try await sql.raw(
                """
                SELECT day, channel, status, region, count FROM verification_days
                WHERE day >= \(bind: from) AND day <= \(bind: to)
                """
            ).all() {
                let day = try row.decode(column: "day", as: Int.self)
                days.insert(day)
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                    let status = VerificationStatus(rawValue: try row.decode(column: "status", as: String.self))
                else { continue }
                counts.append(
                    VerificationDayCount(
                        day: day, channel: channel, status: status,
                        region: try row.decode(column: "region", as: String.self),
                        count: try row.decode(column: "count", as: Int.self)))
            }
            return (days, counts)
        }
    }

    /// Records the counts of `days`, which can no longer change, in one transaction; a day another node recorded
    /// first keeps that node's counts.
    func recordDayCounts(_ counts: [VerificationDayCount], days: [Int]) async throws {
        try await database.transaction { sql in
            let markers = days.map {
                VerificationDayCount(day: $0, channel: .sms, status: .pending, region: "", count: 0)
            }
            for chunk in stride(from: 0, to: markers.count + counts.count, by: 500) {
                let rows = (markers + counts)[chunk..<min(chunk + 500, markers.count + counts.count)]
                let values = SQLList(
                    rows.enumerated().map { offset, row in
                        // A day's marker row has the empty channel.
                        let channel = chunk + offset < markers.count ? "" : row.channel.rawValue
                        return SQLGroupExpression([
                            SQLBind(row.day), SQLBind(channel), SQLBind(row.status.rawValue), SQLBind(row.region),
                            SQLBind(row.count),
                        ])
                    })
                try await sql.raw(
                    """
                    INSERT INTO verification_days (day, channel, status, region, count) VALUES \(values)
                    ON CONFLICT (day, channel, status, region) DO NOTHING
                    """
                ).run()
            }
        }
    }

    /// Up to `limit` verifications of every project (or of `projectId`), newest first, after the one `after`
    /// names; with `destinationKey`, only those to that destination.
    func recent(projectId: String?, destinationKey: String?, after: String?, limit: Int) async throws
        -> [VerificationRecord]
    {
        try await database.lookup { sql in
            let project: SQLQueryString = projectId.map { "AND project_id = \(bind: $0)" } ?? ""
            let destination: SQLQueryString = destinationKey.map { "AND destination_key = \(bind: $0)" } ?? ""
            return try await VerificationStore.table.newestOfAll(
                filter: "\(project) \(destination)", after: after, limit: limit, on: sql)
        }
    }
}
