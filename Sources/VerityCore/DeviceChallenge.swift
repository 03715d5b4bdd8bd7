import Foundation

/// A challenge as a device sees it, with exactly what it must sign to answer.
public struct DeviceChallenge: Codable, Sendable, Equatable {
    public var id: String
    /// The factor this device answers with.
    public var factorId: String
    public var status: ChallengeStatus
    public var message: String
    public var details: [ChallengeDetail]
    public var userVerification: UserVerification
    public var createdAt: Date
    public var expiresAt: Date
    /// The hash of `message` and `details` the signature binds (see ``ChallengeSigningPayload``).
    public var contentHash: String
    /// The fields of the signed payload, in order: `challengeId`, `factorId`, `contentHash`, `status`.
    public var signedFields: [String]
    /// Where, when and from which app the request comes: part of the content hash.
    public var context: ChallengeContext?

    public init(
        id: String, factorId: String, status: ChallengeStatus, message: String, details: [ChallengeDetail],
        userVerification: UserVerification, createdAt: Date, expiresAt: Date, contentHash: String,
        signedFields: [String], context: ChallengeContext? = nil
    ) {
        self.context = context
        self.id = id
        self.factorId = factorId
        self.status = status
        self.message = message
        self.details = details
        self.userVerification = userVerification
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.contentHash = contentHash
        self.signedFields = signedFields
    }
}
