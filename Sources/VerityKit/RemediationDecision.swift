import Foundation
import VerityCore

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
