import Foundation
import SQLKit

/// How a device token's use is recorded in the replay log: one insert that both the factor's own spend and a
/// challenge's answer (which spends the token with the answer, in one transaction) write, so neither calls the
/// other's store.
extension FactorService.DeviceTokenUse {
    /// Records the use in the caller's transaction; false when the `jti` was seen before (a replay).
    func spend(in sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO device_token_uses (factor_id, jti, expires_at)
            VALUES (\(bind: factorId), \(bind: jti), \(bind: expiresAt.storedValue))
            ON CONFLICT (factor_id, jti) DO NOTHING
            RETURNING jti
            """
        ).first() != nil
    }
}
