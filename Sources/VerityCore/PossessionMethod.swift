import Foundation

/// How possession was proven.
public enum PossessionMethod: String, WireEnum, Sendable {
    case otp
    case instantLink = "instant_link"
    /// A carrier-based check (a silent-possession provider configured on the server).
    case silent
}
