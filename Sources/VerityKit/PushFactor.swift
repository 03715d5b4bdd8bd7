import Foundation
import VerityCore

/// A push factor enrolled on this device, as VerityKit keeps it locally.
///
/// Records are kept as JSON in the ``SecureStore`` and updated from the server's answers. The private key is not
/// part of the record; it stays in the ``FactorKeyStore``.
public struct PushFactor: Codable, Sendable, Equatable, Identifiable {
    /// The server's factor identifier (`fac_…`).
    public let id: String
    /// The user the factor belongs to.
    public let userId: String
    /// Whether the factor has proved possession of its key and can answer challenges.
    public internal(set) var status: FactorStatus
    /// The name shown to the user in lists of their devices.
    public internal(set) var friendlyName: String
    /// How push notifications reach this device.
    public internal(set) var pushPlatform: PushPlatform
    /// The push token last registered with the server, or `nil`.
    public internal(set) var pushToken: String?
    /// The app identifier sent at enrollment, or `nil`.
    public let appId: String?
    /// The app's metadata about the factor, which its backend reads with the factor, or `nil`.
    public internal(set) var metadata: [String: String]?
    /// When the server created the factor.
    public let createdAt: Date
    /// When the factor was verified, or `nil` while it is not.
    public internal(set) var verifiedAt: Date?
    /// The name of the factor's proof-of-possession key in the ``FactorKeyStore``.
    var keyReference: String
    /// The name of the factor's user-verification key in the ``FactorKeyStore``, when it has one.
    var userVerificationKeyReference: String?

    /// Whether the factor can answer challenges.
    public var isVerified: Bool { status == .verified }

    /// Whether the factor has a user-verification key, so can approve a challenge that requires user verification.
    public var hasUserVerificationKey: Bool { userVerificationKeyReference != nil }

    init(factor: Factor, pushToken: String?, keyReference: String, userVerificationKeyReference: String? = nil) {
        self.userVerificationKeyReference = userVerificationKeyReference
        self.id = factor.id
        self.userId = factor.userId
        self.status = factor.status
        self.friendlyName = factor.friendlyName
        self.pushPlatform = factor.pushPlatform ?? .none
        self.pushToken = pushToken
        self.appId = factor.appId
        self.metadata = factor.metadata
        self.createdAt = factor.createdAt
        self.verifiedAt = factor.verifiedAt
        self.keyReference = keyReference
    }

    /// Takes the server-side fields of `factor`.
    mutating func update(from factor: Factor) {
        status = factor.status
        friendlyName = factor.friendlyName
        if let platform = factor.pushPlatform { pushPlatform = platform }
        metadata = factor.metadata
        verifiedAt = factor.verifiedAt
    }
}
