import Foundation
import VerityCore

/// A stored verification. The code itself is never stored: it is derived from `codeSalt` with the master key.
struct VerificationRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var channel: Channel
    /// The destination as given (normalised), which is shown and sent to.
    var destination: String
    /// The canonical login key that pending codes and look-ups are keyed on (``Destination/key``).
    var destinationKey: String
    var locale: String
    var status: VerificationStatus
    var codeSalt: String
    var codeLength: Int
    var sendAttempts: Int
    var checkAttempts: Int
    var createdAt: Date
    var updatedAt: Date
    var expiresAt: Date
    var purpose: VerificationPurpose = .api
    /// Claims the session a sign-in or step-up code opens (or steps up) is to carry in its tokens, as the client
    /// asked when it started the code (Descope's `loginOptions.customClaims`); nil for none.
    var sessionClaims: [String: JSONValue]? = nil
    /// The face the verification was started through, where that decides who may read its code back; nil for any
    /// other. A later start that re-sends the pending code leaves it as it was.
    var startedBy: StartingFace? = nil
    /// How the app proved itself when app verification admitted the code's send (the latest proof a re-send
    /// brought); nil when none was asked for.
    var appProof: AppVerificationProof? = nil

    /// The status a client sees: a pending verification past its lifetime is expired.
    func status(at now: Date) -> VerificationStatus {
        status == .pending && expiresAt <= now ? .expired : status
    }

    func response(at now: Date) -> VerificationResponse {
        VerificationResponse(
            id: id, to: destination, channel: channel, status: status(at: now), locale: locale,
            sendAttempts: sendAttempts, checkAttempts: checkAttempts, createdAt: createdAt, expiresAt: expiresAt)
    }
}
