import Crypto
import Foundation
import Logging
import VerityCore

/// One thing an operator did in the console.
public struct AuditEntry: Sendable, Equatable, Codable {
    public var id: String
    public var operatorId: String
    /// The operator's name (nil once the operator is gone).
    public var operatorName: String?
    /// What was done, such as `api_key.revoke`.
    public var action: String
    /// What it was done to: ids, never secrets.
    public var target: String
    public var createdAt: Date
}
