import Foundation
import VerityCore

/// A stored verification. The code itself is never stored: it is derived from `codeSalt` with the master key.
struct VerificationRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var channel: Channel
    var destination: String
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

/// What a code proves; codes of one purpose never pass for another.
enum VerificationPurpose: String, Sendable {
    /// Started by a backend through `/v1/verifications`.
    case api
    /// A sign-in (sign-up-or-in) code from `/v1/auth/otp/start`.
    case signIn = "sign_in"
    /// A second factor for a signed-in session, from `/v1/auth/stepup/start`.
    case stepUp = "step_up"
}
