import Foundation

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
