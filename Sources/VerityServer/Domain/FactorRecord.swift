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
    /// The app's metadata (string values, within ``FactorMetadata/maxLength``).
    var metadata: [String: String]?
    var nonce: String?
    var enrollmentTokenHash: String?
    var totpSecret: String?
    var totpAlgorithm: String?
    var totpDigits: Int?
    var totpPeriod: Int?
    var totpLastCounter: Int64?
    var createdAt: Date
    var verifiedAt: Date?
    /// A push factor's second key, whose use needs the owner (base64 DER), if it has one.
    var userVerificationKey: String? = nil
    /// When the factor was suspended after a report of unusual activity.
    var suspendedAt: Date? = nil
    /// An `apns` factor's APNs environment, when the device said; the server's configured one otherwise.
    var apnsEnvironment: APNsEnvironment? = nil

    /// The device's public key, for checking its signatures.
    func signingKey() throws -> P256.Signing.PublicKey {
        guard let publicKey, let key = try? P256.Signing.PublicKey(derBase64: publicKey) else {
            throw VerityError(.invalidSignature, "The factor has no device key.")
        }
        return key
    }

    /// The key of `type` that checks an answer's signature.
    func signingKey(_ type: FactorKeyType) throws -> P256.Signing.PublicKey {
        switch type {
        case .proofOfPossession: return try signingKey()
        case .userVerification:
            guard let userVerificationKey, let key = try? P256.Signing.PublicKey(derBase64: userVerificationKey)
            else {
                throw VerityError(
                    .userVerificationRequired, "The factor has no user-verification key; add one from the device.")
            }
            return key
        }
    }

    var response: Factor {
        Factor(
            id: id, userId: userId, type: type, status: status, friendlyName: friendlyName,
            pushPlatform: pushPlatform, appId: appId, sdkVersion: sdkVersion, metadata: metadata,
            createdAt: createdAt, verifiedAt: verifiedAt,
            hasUserVerificationKey: type == .push ? userVerificationKey != nil : nil, suspendedAt: suspendedAt)
    }
}
