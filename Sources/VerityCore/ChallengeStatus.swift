import Foundation

/// The life of a challenge.
public enum ChallengeStatus: String, WireEnum, Sendable {
    case pending
    case approved
    case denied
    case expired
}
