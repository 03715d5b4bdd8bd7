import Crypto
import Foundation

/// A device's answer to a push challenge.
public enum ChallengeAnswer: String, WireEnum, Sendable {
    /// The user approved the request.
    case approved
    /// The user denied the request.
    case denied
}
