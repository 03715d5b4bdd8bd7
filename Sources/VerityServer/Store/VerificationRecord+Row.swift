import Foundation
import SQLKit
import VerityCore

/// How a ``VerificationRecord`` is stored: the `verifications` columns it is made from, and the record a row of them
/// holds.
///
/// Kept beside the record rather than inside its store, so that another aggregate's store may read the table in a
/// joined `SELECT` without calling this one.
extension VerificationRecord {
    /// The `verifications` columns a record is made from, as a `SELECT` list.
    static let columns = """
        id, project_id, channel, destination, destination_key, locale, status, code_salt, code_length, send_attempts, \
        check_attempts, created_at, updated_at, expires_at, purpose, session_claims, started_by, \
        app_proof
        """

    /// The record a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            channel: try row.enumeration("channel", as: Channel.self),
            destination: try row.decode(column: "destination", as: String.self),
            destinationKey: try row.decode(column: "destination_key", as: String.self),
            locale: try row.decode(column: "locale", as: String.self),
            status: try row.enumeration("status", as: VerificationStatus.self),
            codeSalt: try row.decode(column: "code_salt", as: String.self),
            codeLength: try row.decode(column: "code_length", as: Int.self),
            sendAttempts: try row.decode(column: "send_attempts", as: Int.self),
            checkAttempts: try row.decode(column: "check_attempts", as: Int.self),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"),
            expiresAt: try row.date("expires_at"),
            purpose: try row.enumeration("purpose", as: VerificationPurpose.self),
            sessionClaims: try row.json("session_claims", as: [String: JSONValue].self),
            startedBy: try row.decodeNil(column: "started_by")
                ? nil : try row.enumeration("started_by", as: StartingFace.self),
            appProof: try row.decodeNil(column: "app_proof")
                ? nil : try row.enumeration("app_proof", as: AppVerificationProof.self))
    }
}
