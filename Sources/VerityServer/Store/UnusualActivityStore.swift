import Foundation
import SQLKit
import VerityCore

/// A device's report of unusual activity: the security event and the project's response, recorded in the caller's
/// transaction (the one that records the signed denial).
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

    /// Records the security event and applies the project's ``UnusualActivityResponse``; returns the response
    /// applied. Revoking sessions and disabling the user touch only a Verity user of that id (`usr_…`); for a
    /// backend's own user id they change nothing.
    static func report(_ report: Report, in work: UnitOfWork) async throws -> UnusualActivityResponse {
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
        let response =
            try await sql.raw(
                "SELECT unusual_activity_response FROM projects WHERE id = \(bind: report.projectId)"
            ).first(decodingColumn: "unusual_activity_response", as: String.self)
            .flatMap(UnusualActivityResponse.init(rawValue:)) ?? .none
        switch response {
        case .none: break
        case .revokeSessions:
            try await SessionStore.revokeAll(
                userId: report.userId, projectId: report.projectId, reason: UnusualActivity.eventType, now: report.at,
                in: sql)
        case .suspendFactor:
            try await FactorStore.suspend(id: report.factorId, now: report.at, in: sql)
        case .disableUser:
            try await sql.raw(
                """
                UPDATE users SET disabled = 1
                WHERE id = \(bind: report.userId) AND project_id = \(bind: report.projectId)
                """
            ).run()
            try await SessionStore.revokeAll(
                userId: report.userId, projectId: report.projectId, reason: UnusualActivity.eventType, now: report.at,
                in: sql)
        }
        return response
    }
}
