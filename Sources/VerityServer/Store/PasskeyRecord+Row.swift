import Foundation
import SQLKit
import VerityCore

extension PasskeyRecord {
    /// The stored values of a new credential, `credential_id` to `last_used_at` in that order: the project's
    /// `passkeys` and the console's `console_passkeys` keep a credential in the same columns.
    var credentialValues: SQLQueryString {
        """
        \(bind: Base64URL.encode(credential.credentialID)), \(bind: credential.publicKeyCBOR.base64EncodedString()),
        \(bind: Int64(credential.signCount)), \(bind: credential.backupEligible ? 1 : 0), \(bind: backedUp ? 1 : 0),
        \(bind: transports.joined(separator: ",")), \(bind: aaguid.base64EncodedString()), \(bind: attestationFormat),
        \(bind: friendlyName), \(bind: createdAt.storedValue), NULL
        """
    }

    /// A passkey from a row of `passkeys`' columns, which the console's `console_passkeys` reads under the same names.
    init(row: any SQLRow) throws {
        func data(_ column: String, _ decode: (String) -> Data?) throws -> Data {
            guard let value = decode(try row.decode(column: column, as: String.self)) else {
                throw StoreError.corruptValue(column: "passkeys.\(column)")
            }
            return value
        }
        let count = try row.decode(column: "sign_count", as: Int64.self)
        guard let signCount = UInt32(exactly: count) else {
            throw StoreError.corruptValue(column: "passkeys.sign_count")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            projectId: try row.decode(column: "project_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            credential: StoredPasskey(
                credentialID: try data("credential_id") { Base64URL.decode($0).map { Data($0) } },
                publicKeyCBOR: try data("public_key") { Data(base64Encoded: $0) }, signCount: signCount,
                backupEligible: try row.decode(column: "backup_eligible", as: Int.self) != 0),
            backedUp: try row.decode(column: "backed_up", as: Int.self) != 0,
            transports: try row.decode(column: "transports", as: String.self).split(separator: ",").map(String.init),
            aaguid: try data("aaguid") { Data(base64Encoded: $0) },
            attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            friendlyName: try row.decode(column: "friendly_name", as: String.self),
            createdAt: try row.date("created_at"), lastUsedAt: try row.optionalDate("last_used_at"))
    }
}
