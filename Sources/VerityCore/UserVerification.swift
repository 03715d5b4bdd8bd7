import Foundation

/// How strongly the device should check that its owner is present before answering.
public enum UserVerification: String, WireEnum, Sendable {
    case required
    case preferred
    case discouraged
}
