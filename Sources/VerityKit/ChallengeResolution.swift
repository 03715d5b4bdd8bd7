import Foundation
import VerityCore

/// How ``VerityPush/resolve(challengeId:factorId:handler:)`` ended.
public struct ChallengeResolution: Sendable, Equatable {
    /// What happened to the challenge.
    public enum Outcome: Sendable, Equatable {
        /// Approved, signed by this key.
        case approved(FactorKeyType)
        /// Denied (signed), with the reason the user gave.
        case denied(DenyReason?)
        /// Nothing was sent; the challenge is still pending on the server.
        case pending
    }

    /// The challenge as last seen: the server's answer when something was sent, else as fetched.
    public var challenge: DeviceChallenge
    /// What happened.
    public var outcome: Outcome
    /// What the owner's verification gave, when the device asked for it.
    public var userVerificationResult: UserVerificationResult?
    /// Every step the app was given, in order.
    public var steps: [RemediationStep]
}
