import Foundation
import VerityCore

/// A stored possession flow.
struct PossessionRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var flow: PossessionFlowType
    /// The E.164 number, once the backend or the app gave one.
    var phone: String?
    var finalTargetURL: String?
    var locale: String
    var status: PossessionStatus
    var resends: Int
    var retries: Int
    var numberChanges: Int
    var method: PossessionMethod?
    var createdAt: Date
    var expiresAt: Date
    var completedAt: Date?
    var validatedAt: Date?
    /// The number the backend started the flow with, if it named one.
    var backendPhone: String?
    /// Whether `phone` is a test number of the project (fixed code, never sent to).
    var testNumber = false
    /// Whether the backend's start let the app choose a test number (`allowTestNumbers`).
    var allowsTestNumbers = false
    /// Where the flow's carrier check stands; nil when it started without one.
    var carrierCheck: CarrierCheckStatus?
    /// The face resource that started the flow and alone may read it (a Twilio service SID); nil for the API's.
    var owner: String?

    /// The status a client sees: an unfinished flow past its lifetime is expired.
    func status(at now: Date) -> PossessionStatus {
        switch status {
        case .succeeded, .failed: status
        default: expiresAt <= now ? .expired : status
        }
    }
}
