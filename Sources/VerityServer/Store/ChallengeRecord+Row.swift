import Foundation
import SQLKit
import VerityCore

/// How a ``ChallengeRecord`` is stored: the `challenges` columns it is made from, and the record a row of them holds.
///
/// Kept beside the record rather than inside its store, so that another aggregate's store may read the table in a
/// joined `SELECT` without calling this one.
extension ChallengeRecord {
    /// The `challenges` columns a record is made from, as a `SELECT` list.
    static let columns = """
        id, project_id, user_id, factor_id, type, status, message, details, hidden_details, content_hash, \
        user_verification, created_at, expires_at, responded_at, responded_factor_id, context, response_key_type, \
        response_amr, deny_reason, user_verification_result
        """

    /// The record a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        let decoder = JSONDecoder()
        self.init(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            factorId: try row.decode(column: "factor_id", as: String?.self),
            type: try row.enumeration("type", as: FactorType.self),
            status: try row.enumeration("status", as: ChallengeStatus.self),
            message: try row.decode(column: "message", as: String.self),
            details: try decoder.decode(
                [ChallengeDetail].self, from: Data(try row.decode(column: "details", as: String.self).utf8)),
            hiddenDetails: try decoder.decode(
                [String: String].self, from: Data(try row.decode(column: "hidden_details", as: String.self).utf8)),
            contentHash: try row.decode(column: "content_hash", as: String.self),
            userVerification: try row.enumeration("user_verification", as: UserVerification.self),
            createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"),
            respondedAt: try row.optionalDate("responded_at"),
            respondedFactorId: try row.decode(column: "responded_factor_id", as: String?.self),
            context: try row.json("context", as: ChallengeContext.self),
            answer: ChallengeRecord.AnswerStatement(
                keyType: try row.decode(column: "response_key_type", as: String?.self).flatMap(
                    FactorKeyType.init(rawValue:)),
                amr: try row.json("response_amr", as: [UserVerificationMethod].self),
                reason: try row.decode(column: "deny_reason", as: String?.self).flatMap(DenyReason.init(rawValue:)),
                userVerificationResult: try row.decode(column: "user_verification_result", as: String?.self).flatMap(
                    UserVerificationResult.init(rawValue:))))
    }
}
