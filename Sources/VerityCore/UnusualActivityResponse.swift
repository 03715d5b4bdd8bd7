import Foundation

/// What a project does when a device reports unusual activity (a deny with a ``DenyReason``).
public enum UnusualActivityResponse: String, WireEnum, Sendable {
    /// Record the security event and send the webhook, nothing more.
    case none
    /// Also revoke every session of the user (only for a Verity user, `usr_…`).
    case revokeSessions = "revoke_sessions"
    /// Also suspend the factor that reported: it answers nothing more until the backend enrolls a new one.
    case suspendFactor = "suspend_factor"
    /// Also disable the user, which revokes their sessions (only for a Verity user, `usr_…`).
    case disableUser = "disable_user"
}
