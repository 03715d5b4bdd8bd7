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
