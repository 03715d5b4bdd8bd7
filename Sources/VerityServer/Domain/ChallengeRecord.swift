import Foundation
import VerityCore

/// A stored challenge. `status` is `pending` until answered, or expired by housekeeping.
struct ChallengeRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var userId: String
    var factorId: String?
    var type: FactorType
    var status: ChallengeStatus
    var message: String
    var details: [ChallengeDetail]
    var hiddenDetails: [String: String]
    var contentHash: String
    var userVerification: UserVerification
    var createdAt: Date
    var expiresAt: Date
    var respondedAt: Date?
    var respondedFactorId: String?
    /// Where, when and from which app, as the device shows it (part of ``contentHash``).
    var context: ChallengeContext? = nil
    /// How the answer was signed and why, as the device signed it.
    var answer = AnswerStatement()

    /// What a signed answer states besides approve or deny: which key signed, how the owner verified, why they denied.
    struct AnswerStatement: Sendable, Equatable {
        var keyType: FactorKeyType?
        var amr: [UserVerificationMethod]?
        var reason: DenyReason?
        var userVerificationResult: UserVerificationResult?
    }

    /// The status a client sees: a pending challenge past its expiry is expired even before the service marks it.
    func status(at now: Date) -> ChallengeStatus {
        status == .pending && expiresAt <= now ? .expired : status
    }

    /// The key an answer was signed with: the one it states, or the factor's device key when it states none (as
    /// `answer` checks it); nil while unanswered.
    var answerKeyType: FactorKeyType? {
        respondedAt == nil ? nil : answer.keyType ?? .proofOfPossession
    }

    func response(at now: Date) -> Challenge {
        Challenge(
            id: id, userId: userId, factorId: factorId, type: type, status: status(at: now), message: message,
            details: details, hiddenDetails: hiddenDetails, userVerification: userVerification,
            createdAt: createdAt, expiresAt: expiresAt, respondedAt: respondedAt,
            respondedFactorId: respondedFactorId, context: context, keyType: answer.keyType, amr: answer.amr,
            reason: answer.reason, userVerificationResult: answer.userVerificationResult)
    }

    func deviceView(for factorId: String, at now: Date) -> DeviceChallenge {
        DeviceChallenge(
            id: id, factorId: factorId, status: status(at: now), message: message, details: details,
            userVerification: userVerification, createdAt: createdAt, expiresAt: expiresAt,
            contentHash: contentHash, signedFields: ChallengeSigningPayload.signedFields, context: context)
    }
}
