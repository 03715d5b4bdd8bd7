import Foundation
import VerityCore

/// What the user chose while an instant link waits to be tapped on the phone.
public enum PossessionLinkAction: Sendable, Equatable {
    /// Keep waiting for the link to be confirmed (up to `seconds`, then ask again).
    case wait(seconds: Int)
    /// Send the link again.
    case resend
    /// Send a link to another number.
    case changeNumber(String)
    /// Stop the check.
    case cancel
}
