import Foundation

/// How possession was proven.
public enum PossessionMethod: String, WireEnum, Sendable {
    case otp
    case instantLink = "instant_link"
    /// A carrier check: the mobile operator confirmed the number (the project's CAMARA Number Verification, or a
    /// silent-possession provider the server embeds).
    case silent
}
