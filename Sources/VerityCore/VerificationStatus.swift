import Foundation

/// The state of a one-time-code verification.
public enum VerificationStatus: String, WireEnum, Sendable {
    case pending
    case approved
    case canceled
    case expired
    /// Too many wrong codes: the verification can no longer be approved.
    case maxAttemptsReached = "max_attempts_reached"
}
