import Foundation

/// The app's view of a flow: what it may do next.
public struct PossessionState: Codable, Sendable, Equatable {
    public var correlationId: String
    public var flow: PossessionFlowType
    public var status: PossessionStatus
    /// The number being proven, masked; absent until there is one.
    public var maskedPhoneNumber: String?
    /// Whether the app must supply the phone number (to `otp/start` or `link/start`).
    public var phoneNumberNeeded: Bool
    public var resendsLeft: Int
    public var retriesLeft: Int
    public var numberChangesLeft: Int
    /// When the current code or link stops working, if one was sent.
    public var codeExpiresAt: Date?
    public var expiresAt: Date
    /// The carrier check's outcome, when the flow started with one; anything but `verified` leaves a code to use.
    public var carrierCheck: CarrierCheckStatus?

    public init(
        correlationId: String, flow: PossessionFlowType, status: PossessionStatus, maskedPhoneNumber: String?,
        phoneNumberNeeded: Bool, resendsLeft: Int, retriesLeft: Int, numberChangesLeft: Int, codeExpiresAt: Date?,
        expiresAt: Date, carrierCheck: CarrierCheckStatus? = nil
    ) {
        self.correlationId = correlationId
        self.flow = flow
        self.status = status
        self.maskedPhoneNumber = maskedPhoneNumber
        self.phoneNumberNeeded = phoneNumberNeeded
        self.resendsLeft = resendsLeft
        self.retriesLeft = retriesLeft
        self.numberChangesLeft = numberChangesLeft
        self.codeExpiresAt = codeExpiresAt
        self.expiresAt = expiresAt
        self.carrierCheck = carrierCheck
    }
}
