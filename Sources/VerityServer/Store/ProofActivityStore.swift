import Foundation
import SQLKit

/// The proofs a project's sign-ins and flows used, counted per day: a read-only report over the tables where each
/// proof is recorded (a code's `verifications.app_proof` and approval, a possession flow's `method`), in one grouped
/// query so a fortnight costs one round trip. It changes nothing, so it calls no other store.
struct ProofActivityStore: Sendable {
    let database: Database

    /// The proofs of `projectId` (every project's when nil) recorded on sign-ins and flows started in `from..<to`,
    /// counted per UTC day (days since 1970-01-01) and proof (``SignInProof``'s raw values).
    func counts(projectId: String?, from: Date, to: Date) async throws -> [(day: Int, proof: String, count: Int)] {
        let day = database.utcDay(of: "created_at")
        let project: SQLQueryString = projectId.map { "project_id = \(bind: $0) AND" } ?? ""
        let (from, to) = (from.storedValue, to.storedValue)
        return try await database.lookup { sql in
            try await sql.raw(
                """
                SELECT day, proof, COUNT(*) AS n FROM (
                    SELECT \(day) AS day, app_proof AS proof FROM verifications
                    WHERE \(project) created_at >= \(bind: from) AND created_at < \(bind: to)
                      AND app_proof IS NOT NULL
                    UNION ALL
                    SELECT \(day) AS day, 'code' AS proof FROM verifications
                    WHERE \(project) created_at >= \(bind: from) AND created_at < \(bind: to)
                      AND status = 'approved' AND purpose NOT LIKE 'possession%'
                    UNION ALL
                    SELECT \(day) AS day,
                           CASE method WHEN 'otp' THEN 'code' WHEN 'silent' THEN 'carrier' ELSE method END AS proof
                    FROM possession_flows
                    WHERE \(project) created_at >= \(bind: from) AND created_at < \(bind: to)
                      AND method IS NOT NULL
                ) proofs
                GROUP BY day, proof
                """
            ).all().map { row in
                (
                    try row.decode(column: "day", as: Int.self), try row.decode(column: "proof", as: String.self),
                    try row.decode(column: "n", as: Int.self)
                )
            }
        }
    }
}
