import Foundation

/// `POST /v1/possession/{id}/validate` (API key): the backend's answer, given once.
public struct PossessionValidation: Codable, Sendable, Equatable {
    public var success: Bool
    /// Why not, when `success` is false: `pending`, `failed`, `expired` or `already_validated`.
    public var reason: String?
    /// The E.164 number proven (or being proven).
    public var phoneNumber: String?
    public var flow: PossessionFlowType
    public var method: PossessionMethod?
    public var completedAt: Date?
    /// Whether the number proven is one of the project's test numbers (fixed code, never sent to): nothing was
    /// proven about a real phone, so a production backend should refuse it.
    public var testNumber: Bool

    public init(
        success: Bool, reason: String?, phoneNumber: String?, flow: PossessionFlowType, method: PossessionMethod?,
        completedAt: Date?, testNumber: Bool = false
    ) {
        self.success = success
        self.reason = reason
        self.phoneNumber = phoneNumber
        self.flow = flow
        self.method = method
        self.completedAt = completedAt
        self.testNumber = testNumber
    }
}
