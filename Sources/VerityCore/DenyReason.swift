import Foundation

/// Why the owner denied a challenge, when they said: a signed report of unusual activity.
public enum DenyReason: String, WireEnum, Sendable {
    /// "This wasn't me": the owner did not start what the challenge asks about.
    case notMe = "not_me"
    /// The owner finds the request suspicious (an unknown place or app).
    case suspicious
}
