import Foundation

/// One line shown to the person on the device ("Location": "Berlin").
public struct ChallengeDetail: Codable, Sendable, Equatable {
    public var label: String
    public var value: String

    public init(label: String, value: String) {
        self.label = label
        self.value = value
    }
}

/// How strongly the device should check that its owner is present before answering.
public enum UserVerification: String, WireEnum, Sendable {
    case required
    case preferred
    case discouraged
}

/// The life of a challenge.
public enum ChallengeStatus: String, WireEnum, Sendable {
    case pending
    case approved
    case denied
    case expired
}

/// `POST /v1/challenges` (API key). Name a `factorId`, or a `userId` to reach all the user's push factors
/// (the first answer wins). For a TOTP factor send `code`; the answer is immediate.
public struct CreateChallengeRequest: Codable, Sendable {
    public var factorId: String?
    public var userId: String?
    public var message: String?
    public var details: [ChallengeDetail]?
    /// Data kept with the challenge for the backend, never shown on the device.
    public var hiddenDetails: [String: String]?
    /// Seconds until the challenge expires (10–3600, default 300).
    public var expiresIn: Int?
    public var userVerification: UserVerification?
    /// The TOTP code, for a TOTP factor.
    public var code: String?
    /// Where, from which client and app the request comes, and more lines to show; the device signs it with the
    /// message and details. The server sets its `time`.
    public var context: ChallengeContext?

    public init(
        factorId: String? = nil, userId: String? = nil, message: String? = nil, details: [ChallengeDetail]? = nil,
        hiddenDetails: [String: String]? = nil, expiresIn: Int? = nil, userVerification: UserVerification? = nil,
        code: String? = nil, context: ChallengeContext? = nil
    ) {
        self.context = context
        self.factorId = factorId
        self.userId = userId
        self.message = message
        self.details = details
        self.hiddenDetails = hiddenDetails
        self.expiresIn = expiresIn
        self.userVerification = userVerification
        self.code = code
    }
}

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

/// `POST /v1/device/factors/{id}/challenges/{cid}/respond` (device JWT).
public struct RespondChallengeRequest: Codable, Sendable {
    public var status: ChallengeAnswer
    /// A compact ES256 JWS over the ``ChallengeSigningPayload`` for this answer.
    public var signature: String
    /// Which key signed; absent means the proof-of-possession key. Must equal the signed `keyType`.
    public var keyType: FactorKeyType?
    /// How the owner verified; must equal the signed `amr`.
    public var amr: [UserVerificationMethod]?
    /// Why the owner denied (only with `denied`); must equal the signed `reason`.
    public var reason: DenyReason?
    /// What the owner's verification gave; must equal the signed `userVerificationResult`.
    public var userVerificationResult: UserVerificationResult?

    public init(
        status: ChallengeAnswer, signature: String, keyType: FactorKeyType? = nil,
        amr: [UserVerificationMethod]? = nil, reason: DenyReason? = nil,
        userVerificationResult: UserVerificationResult? = nil
    ) {
        self.status = status
        self.signature = signature
        self.keyType = keyType
        self.amr = amr
        self.reason = reason
        self.userVerificationResult = userVerificationResult
    }

    /// The request that carries `payload` and its signature, stating what the payload states.
    public init(signed payload: ChallengeSigningPayload, signature: String) {
        self.init(
            status: payload.status, signature: signature, keyType: payload.keyType, amr: payload.amr,
            reason: payload.reason, userVerificationResult: payload.userVerificationResult)
    }
}

/// A page of results.
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    /// Pass as `cursor` to get the next page; absent on the last page (and on lists that are never paged).
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String? = nil) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
