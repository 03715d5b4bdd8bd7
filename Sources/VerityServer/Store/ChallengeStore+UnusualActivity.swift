import Foundation
import SQLKit
import VerityCore

/// A device's report of unusual activity (a signed denial with a reason): the challenges' owner records its security
/// event and reads the project's chosen response in the denial's unit of work; ``ChallengeService`` applies it.
extension ChallengeStore {
    /// A report of unusual activity, as its security event stores it.
    struct UnusualActivityReport: Sendable {
        var eventId: String
        var projectId: String
        var userId: String
        var factorId: String
        var challengeId: String
        var at: Date
    }

    /// Records the report's security event in `work` (the one that records the denial).
    func recordUnusualActivity(_ report: UnusualActivityReport, in work: UnitOfWork) async throws {
        try await work.sql.raw(
            """
            INSERT INTO security_events (id, project_id, user_id, session_id, type, ip_address, created_at, factor_id,
                                         challenge_id)
            VALUES (\(bind: report.eventId), \(bind: report.projectId), \(bind: report.userId), NULL,
                    \(bind: UnusualActivity.eventType), NULL, \(bind: report.at.storedValue), \(bind: report.factorId),
                    \(bind: report.challengeId))
            """
        ).run()
    }

    /// The project's ``UnusualActivityResponse`` as `work` sees it (`none` when the project has none).
    func unusualActivityResponse(projectId: String, in work: UnitOfWork) async throws -> UnusualActivityResponse {
        try await work.sql.raw(
            "SELECT unusual_activity_response FROM projects WHERE id = \(bind: projectId)"
        ).first(decodingColumn: "unusual_activity_response", as: String.self)
            .flatMap(UnusualActivityResponse.init(rawValue:)) ?? .none
    }
}
