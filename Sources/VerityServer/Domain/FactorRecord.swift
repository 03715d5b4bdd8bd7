import Crypto
import Foundation
import VerityCore

/// A stored factor: a device key (push) or an authenticator secret (TOTP, sealed with the master key).
struct FactorRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var userId: String
    var type: FactorType
    var status: FactorStatus
    var friendlyName: String
    var publicKey: String?
    var pushPlatform: PushPlatform?
    var pushToken: String?
    var appId: String?
    var sdkVersion: String?
    var nonce: String?
    var enrollmentTokenHash: String?
    var totpSecret: String?
    var totpAlgorithm: String?
    var totpDigits: Int?
    var totpPeriod: Int?
    var totpLastCounter: Int64?
    var createdAt: Date
    var verifiedAt: Date?

    /// The device's public key, for checking its signatures.
    func signingKey() throws -> P256.Signing.PublicKey {
        guard let publicKey, let key = try? P256.Signing.PublicKey(derBase64: publicKey) else {
            throw VerityError(.invalidSignature, "The factor has no device key.")
        }
        return key
    }

    var response: Factor {
        Factor(
            id: id, userId: userId, type: type, status: status, friendlyName: friendlyName,
            pushPlatform: pushPlatform, appId: appId, sdkVersion: sdkVersion, createdAt: createdAt,
            verifiedAt: verifiedAt)
    }
}

/// A stored challenge. `status` is `pending` until answered or expired by the expiry service.
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

    /// The status a client sees: a pending challenge past its expiry is expired even before the service marks it.
    func status(at now: Date) -> ChallengeStatus {
        status == .pending && expiresAt <= now ? .expired : status
    }

    func response(at now: Date) -> Challenge {
        Challenge(
            id: id, userId: userId, factorId: factorId, type: type, status: status(at: now), message: message,
            details: details, hiddenDetails: hiddenDetails, userVerification: userVerification,
            createdAt: createdAt, expiresAt: expiresAt, respondedAt: respondedAt,
            respondedFactorId: respondedFactorId)
    }

    func deviceView(for factorId: String, at now: Date) -> DeviceChallenge {
        DeviceChallenge(
            id: id, factorId: factorId, status: status(at: now), message: message, details: details,
            userVerification: userVerification, createdAt: createdAt, expiresAt: expiresAt,
            contentHash: contentHash, signedFields: ChallengeSigningPayload.signedFields)
    }
}
