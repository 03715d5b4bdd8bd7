import Foundation
import VerityCore

/// What the user chose on the code screen of a possession check.
public enum PossessionCodeAction: Sendable, Equatable {
    /// Check this code.
    case submit(code: String)
    /// Send the code again.
    case resend
    /// Send the same code again by another phone channel: `voice` (a call that says it) or `whatsapp`, for a person
    /// whose SMS does not arrive.
    case resendBy(Channel)
    /// Prove another number instead (a new code goes to it).
    case changeNumber(String)
    /// Stop the check.
    case cancel
}
