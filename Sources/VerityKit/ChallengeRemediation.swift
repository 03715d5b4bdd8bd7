import Foundation
import VerityCore

/// One thing the app handles while ``VerityPush/resolve(challengeId:factorId:handler:)`` answers a challenge, in this
/// order: ``consent(_:)``, then, when the challenge asks for it, ``userVerification(_:)``, with ``message(_:)``s where
/// something needs saying.
public enum RemediationStep: Sendable, Equatable {
    /// Ask the user: show the challenge (message, details, context, all signed) and let them approve, deny or put it
    /// off. Answer ``RemediationDecision/approve``, ``RemediationDecision/deny(reason:)`` or
    /// ``RemediationDecision/noDecision``.
    case consent(DeviceChallenge)
    /// The biometric or passcode prompt is next, for the user-verification key. Answer
    /// ``RemediationDecision/proceed`` to show it, or deny or put off the challenge instead.
    case userVerification(DeviceChallenge)
    /// Something to tell the user; answer how to go on (see ``RemediationMessage``).
    case message(RemediationMessage)
}

/// What went wrong on the way to an answer, as a ``RemediationStep/message(_:)``.
public enum RemediationMessage: Sendable, Equatable {
    /// The owner cancelled, failed or could not do the prompt. For a `required` challenge the app may deny (the
    /// result is signed and reported) or put it off; nothing else approves it. For `preferred`, an explicit
    /// ``RemediationDecision/approve`` approves with the silent key and reports the result; after a cancelled or
    /// failed prompt ``RemediationDecision/proceed`` leaves the challenge pending, and only when the device cannot
    /// verify its owner (`unavailable`) does it approve as `approve` does.
    case userVerificationFailed(UserVerificationResult)
    /// The challenge requires user verification and this factor has no user-verification key
    /// (``VerityPush/addUserVerificationKey(factorId:enrollmentToken:)`` adds one).
    case userVerificationKeyMissing
}

/// The app's answer to a ``RemediationStep``.
public enum RemediationDecision: Sendable, Equatable {
    /// Approve (the answer to ``RemediationStep/consent(_:)``).
    case approve
    /// Deny, signed; with a reason, the denial reports unusual activity ("this wasn't me").
    case deny(reason: DenyReason?)
    /// Leave the challenge pending: nothing is sent.
    case noDecision
    /// Go on with the next step.
    case proceed
}

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
