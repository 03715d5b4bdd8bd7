import Foundation
import SQLKit
import VerityCore

/// How a ``FactorRecord`` is stored: the `factors` columns it is made from, and the record a row of them holds.
///
/// Kept beside the record rather than inside its store, so that another aggregate's store may read the table in a
/// joined `SELECT` without calling this one.
extension FactorRecord {
    /// The `factors` columns a record is made from, as a `SELECT` list.
    static let columns = """
        id, project_id, user_id, type, status, friendly_name, public_key, push_platform, push_token, app_id, \
        sdk_version, nonce, enrollment_token_hash, totp_secret, totp_algorithm, totp_digits, totp_period, \
        totp_last_counter, created_at, verified_at, metadata, user_verification_key, suspended_at, apns_environment
        """

    /// The record a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            type: try row.enumeration("type", as: FactorType.self),
            status: try row.enumeration("status", as: FactorStatus.self),
            friendlyName: try row.decode(column: "friendly_name", as: String.self),
            publicKey: try row.decode(column: "public_key", as: String?.self),
            pushPlatform: try row.decode(column: "push_platform", as: String?.self).flatMap(
                PushPlatform.init(rawValue:)),
            pushToken: try row.decode(column: "push_token", as: String?.self),
            appId: try row.decode(column: "app_id", as: String?.self),
            sdkVersion: try row.decode(column: "sdk_version", as: String?.self),
            metadata: try row.json("metadata", as: [String: String].self),
            nonce: try row.decode(column: "nonce", as: String?.self),
            enrollmentTokenHash: try row.decode(column: "enrollment_token_hash", as: String?.self),
            totpSecret: try row.decode(column: "totp_secret", as: String?.self),
            totpAlgorithm: try row.decode(column: "totp_algorithm", as: String?.self),
            totpDigits: try row.decode(column: "totp_digits", as: Int?.self),
            totpPeriod: try row.decode(column: "totp_period", as: Int?.self),
            totpLastCounter: try row.decode(column: "totp_last_counter", as: Int64?.self),
            createdAt: try row.date("created_at"), verifiedAt: try row.optionalDate("verified_at"),
            userVerificationKey: try row.decode(column: "user_verification_key", as: String?.self),
            suspendedAt: try row.optionalDate("suspended_at"),
            apnsEnvironment: try row.decode(column: "apns_environment", as: String?.self).flatMap(
                APNsEnvironment.init(rawValue:)))
    }
}
