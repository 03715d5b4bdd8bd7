import Foundation
import SQLKit
import VerityCore

/// A device's report of unusual activity: the security event, recorded in the caller's unit of work (the one that
/// records the signed denial), and the project's chosen response.
enum UnusualActivityStore {
    struct Report: Sendable {
        var eventId: String
        var projectId: String
        var userId: String
        var factorId: String
        var challengeId: String
        var reason: DenyReason
        var at: Date
    }

    /// Records the security event and answers the project's ``UnusualActivityResponse``, which the caller applies
    /// in the same unit of work (``ChallengeService``).
    static func record(_ report: Report, in work: UnitOfWork) async throws -> UnusualActivityResponse {
        let sql = work.sql
        try await sql.raw(
            """
            INSERT INTO security_events (id, project_id, user_id, session_id, type, ip_address, created_at, factor_id,
                                         challenge_id)
            VALUES (\(bind: report.eventId), \(bind: report.projectId), \(bind: report.userId), NULL,
                    \(bind: UnusualActivity.eventType), NULL, \(bind: report.at.storedValue), \(bind: report.factorId),
                    \(bind: report.challengeId))
            """
        ).run()
        return try await sql.raw(
            "SELECT unusual_activity_response FROM projects WHERE id = \(bind: report.projectId)"
        ).first(decodingColumn: "unusual_activity_response", as: String.self)
            .flatMap(UnusualActivityResponse.init(rawValue:)) ?? .none
    }
}
