import Foundation
import SQLKit
import VerityCore

/// How many verifications of one channel, in one state, were started on one day.
struct VerificationActivity: Sendable, Equatable {
    /// Days since 1970-01-01 (UTC).
    var day: Int
    var channel: Channel
    var status: VerificationStatus
    var count: Int
}

/// How many phone verifications in one state went to numbers starting with one prefix (the country calling code and
/// the first digits after it), and one such number, from which the country is read.
struct VerificationPrefixActivity: Sendable, Equatable {
    var sample: String
    var status: VerificationStatus
    var count: Int
}

extension VerificationStore {
    /// Verifications of every project started since `since`, counted by day, channel and state.
    func activity(since: Date) async throws -> [VerificationActivity] {
        let day: SQLQueryString =
            database.engine == .postgres
            ? "CAST(floor(created_at / 86400) AS BIGINT)" : "CAST(created_at / 86400 AS INTEGER)"
        return try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT \(day) AS day, channel, status, COUNT(*) AS n FROM verifications
                WHERE created_at >= \(bind: since.storedValue)
                GROUP BY 1, channel, status
                """
            ).all().compactMap { row in
                guard let channel = Channel(rawValue: try row.decode(column: "channel", as: String.self)),
                    let status = VerificationStatus(rawValue: try row.decode(column: "status", as: String.self))
                else { return nil }
                return VerificationActivity(
                    day: try row.decode(column: "day", as: Int.self), channel: channel, status: status,
                    count: try row.decode(column: "n", as: Int.self))
            }
        }
    }

    /// Phone verifications (SMS, voice, WhatsApp) started since `since`, counted by state and number prefix.
    func prefixActivity(since: Date) async throws -> [VerificationPrefixActivity] {
        try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT MIN(destination) AS sample, status, COUNT(*) AS n FROM verifications
                WHERE created_at >= \(bind: since.storedValue) AND channel <> 'email'
                GROUP BY substr(destination, 1, 6), status
                """
            ).all().compactMap { row in
                guard let status = VerificationStatus(rawValue: try row.decode(column: "status", as: String.self))
                else { return nil }
                return VerificationPrefixActivity(
                    sample: try row.decode(column: "sample", as: String.self), status: status,
                    count: try row.decode(column: "n", as: Int.self))
            }
        }
    }

    /// Up to `limit` verifications of every project (or of `projectId`), newest first, after the one `after`
    /// names; with `destinationKey`, only those to that destination.
    func recent(projectId: String?, destinationKey: String?, after: String?, limit: Int) async throws
        -> [VerificationRecord]
    {
        try await database.lookup { sql in
            let start: SQLQueryString =
                after.map {
                    "AND (created_at, id) < (SELECT created_at, id FROM verifications WHERE id = \(bind: $0))"
                } ?? ""
            let project: SQLQueryString = projectId.map { "AND project_id = \(bind: $0)" } ?? ""
            let destination: SQLQueryString = destinationKey.map { "AND destination_key = \(bind: $0)" } ?? ""
            return try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.columns) FROM verifications WHERE 1 = 1 \(project) \(destination) \(start)
                ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)
                """
            ).all().map(Self.record(from:))
        }
    }
}
