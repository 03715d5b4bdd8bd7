import Foundation
import SQLKit
import VerityCore

/// How a ``User`` is stored: the `users` columns it is made from, and the record a row of them holds.
///
/// Kept beside the record rather than inside its store, so that another aggregate's store may read the table in a
/// joined `SELECT` without calling this one.
extension User {
    /// The `users` columns a record is made from, as a `SELECT` list.
    static let columns =
        "id, email, phone, display_name, custom_claims, disabled, created_at, last_sign_in_at"

    /// The record a row holding ``columns`` stores.
    init(row: any SQLRow) throws {
        let claimsText = try row.decode(column: "custom_claims", as: String.self)
        let claims: [String: JSONValue]
        do {
            claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(claimsText.utf8))
        } catch {
            throw StoreError.corruptValue(column: "custom_claims")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            loginIds: [
                try row.decode(column: "email", as: String?.self), try row.decode(column: "phone", as: String?.self),
            ].compactMap { $0 },
            displayName: try row.decode(column: "display_name", as: String?.self),
            customClaims: claims,
            disabled: try row.decode(column: "disabled", as: Int.self) != 0,
            createdAt: try row.date("created_at"),
            lastSignInAt: try row.optionalDate("last_sign_in_at"))
    }
}
