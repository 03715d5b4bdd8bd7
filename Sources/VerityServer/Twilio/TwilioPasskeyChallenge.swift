import Foundation

/// A passkey challenge (`YC…`) of a Twilio entity, for one of its factors or any of them.
struct TwilioPasskeyChallenge: Sendable, Equatable {
    var sid: String
    var entity: TwilioEntityAddress
    /// The factor asked for, or the one that approved a challenge that named none.
    var factorSid: String?
    /// `pending` or `approved` as stored; ``status(at:)`` adds `expired`.
    var status: String
    var expiresAt: Date
    var createdAt: Date
    var updatedAt: Date
    var respondedAt: Date?

    /// The status Twilio shows: a pending challenge past its expiry is `expired`.
    func status(at now: Date) -> String {
        status == "pending" && now >= expiresAt ? "expired" : status
    }
}
