import Foundation

/// A challenge as the backend sees it.
public struct Challenge: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    /// The factor it was sent to, when the backend named one.
    public var factorId: String?
    public var type: FactorType
    public var status: ChallengeStatus
    public var message: String
    public var details: [ChallengeDetail]
    public var hiddenDetails: [String: String]
    public var userVerification: UserVerification
    public var createdAt: Date
    public var expiresAt: Date
    public var respondedAt: Date?
    /// The factor that answered.
    public var respondedFactorId: String?
    /// What the device showed with the message, signed with it.
    public var context: ChallengeContext?
    /// Which of the factor's keys signed the answer.
    public var keyType: FactorKeyType?
    /// How the owner verified, when the user-verification key signed (`face`, `fpt`, `pin`).
    public var amr: [UserVerificationMethod]?
    /// Why the owner denied, when they reported unusual activity.
    public var reason: DenyReason?
    /// What happened when the device asked its owner to verify, when it asked.
    public var userVerificationResult: UserVerificationResult?

    public init(
        id: String, userId: String, factorId: String?, type: FactorType, status: ChallengeStatus, message: String,
        details: [ChallengeDetail], hiddenDetails: [String: String], userVerification: UserVerification,
        createdAt: Date, expiresAt: Date, respondedAt: Date? = nil, respondedFactorId: String? = nil,
        context: ChallengeContext? = nil, keyType: FactorKeyType? = nil, amr: [UserVerificationMethod]? = nil,
        reason: DenyReason? = nil, userVerificationResult: UserVerificationResult? = nil
    ) {
        self.context = context
        self.keyType = keyType
        self.amr = amr
        self.reason = reason
        self.userVerificationResult = userVerificationResult
        self.id = id
        self.userId = userId
        self.factorId = factorId
        self.type = type
        self.status = status
        self.message = message
        self.details = details
        self.hiddenDetails = hiddenDetails
        self.userVerification = userVerification
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.respondedAt = respondedAt
        self.respondedFactorId = respondedFactorId
    }
}
