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
        /// An answer is being checked (since ``PasskeyLink/answerStartedAt``); shown as `pending` once that is longer
        /// ago than ``PasskeyLink/answerLease``, since the node checking it stopped.
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
    /// When the answer being checked began, while the link is `answering`.
    var answerStartedAt: Date? = nil

    /// How long one answer may hold the link. Checking an answer takes well under a second; an answer held longer
    /// belongs to a node that stopped (a crash, a deploy), and the link takes another, as if it had been refused.
    static let answerLease: TimeInterval = 60

    /// The status as of `now`: a link not completed by its expiry is expired, and one whose answer outlived its lease
    /// is pending again.
    func status(at now: Date) -> Status {
        if status != .completed && expiresAt <= now { return .expired }
        if status == .answering, let answerStartedAt, answerStartedAt.addingTimeInterval(Self.answerLease) <= now {
            return .pending
        }
        return status
    }
}
