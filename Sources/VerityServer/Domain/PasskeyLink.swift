import Foundation

/// A single-use link to the hosted passkey page (`/passkeys/{token}`), made by a backend for one ceremony.
struct PasskeyLink: Sendable, Equatable {
    /// What the page does.
    enum Ceremony: String, Sendable, Codable {
        /// Registers a passkey for the link's user.
        case registration
        /// Signs in: as the link's user, or with a discoverable passkey when the link names nobody.
        case signIn = "sign_in"
    }

    /// Where the link is.
    enum Status: String, Sendable, Codable {
        case pending
        /// An answer is being checked.
        case answering
        case completed
        /// Shown, never stored: a pending link past its lifetime.
        case expired
    }

    var id: String
    var projectId: String
    var userId: String?
    var ceremony: Ceremony
    var status: Status
    /// The passkey registered, or the one that signed in.
    var passkeyId: String?
    /// A sign-in's session answer, sealed, until the backend reads it.
    var sealedSession: String?
    var createdAt: Date
    var expiresAt: Date
    var completedAt: Date?

    /// The status as of `now`: a link not completed by its expiry is expired.
    func status(at now: Date) -> Status {
        status != .completed && expiresAt <= now ? .expired : status
    }
}
