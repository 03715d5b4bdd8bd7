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
            pushPlatform: pushPlatform, appId: appId, sdkVersion: sdkVersion, metadata: metadata,
            createdAt: createdAt, verifiedAt: verifiedAt)
    }
}
