import Foundation

/// The answer to a check: `valid` is true only when this check approved the verification.
public struct CheckVerificationResponse: Codable, Sendable, Equatable {
    public var id: String
    public var status: VerificationStatus
    public var valid: Bool

    public init(id: String, status: VerificationStatus, valid: Bool) {
        self.id = id
        self.status = status
        self.valid = valid
    }
}
