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
}
