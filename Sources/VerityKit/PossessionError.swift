import Foundation
import VerityCore

/// Why a step of a possession check failed, for the UI to show. ``VerityPossession`` hands these to the next UI
/// step, so the user can try again; only what ends the check is thrown.
public enum PossessionError: Error, Sendable, Equatable {
    /// The code was wrong; `retriesLeft` more entries are allowed.
    case wrongCode(retriesLeft: Int)
    /// The phone number is not valid (or not allowed for the project).
    case invalidPhoneNumber
    /// The code expired; resend it.
    case codeExpired
    /// The flow allows no more resends.
    case resendLimitReached
    /// The flow allows no more code entries; the check failed.
    case retryLimitReached
    /// The flow allows no more number changes.
    case numberChangeLimitReached
    /// The check's time ran out: the backend must start a new one.
    case expired
    /// The check is already finished (succeeded or failed) and cannot run again.
    case alreadyFinished
    /// The server refused the step in the flow's current state (another request moved the flow on); the user may
    /// choose another action.
    case stepOutOfOrder
    /// The auth token is not the one of a check the server knows (malformed, forged, or of another flow): the
    /// backend must start a new check.
    case invalidToken
    /// Too many codes or links went to this number or its neighbours for now; the user may try again later.
    case rateLimited
    /// The user cancelled.
    case cancelled
    /// Anything else: the underlying error.
    case other(VerityKitError)

    /// Reads what a server refusal means for the user.
    init(_ error: VerityKitError) {
        switch error.serverErrorCode {
        case .wrongCode?: self = .wrongCode(retriesLeft: error.problem?.remainingAttempts ?? 0)
        case .invalidPhoneNumber?, .phoneNumberRequired?, .countryNotAllowed?, .premiumRateNumber?:
            self = .invalidPhoneNumber
        case .verificationNotFound?: self = .codeExpired
        case .resendLimitReached?: self = .resendLimitReached
        case .retryLimitReached?: self = .retryLimitReached
        case .numberChangeLimitReached?: self = .numberChangeLimitReached
        case .possessionExpired?: self = .expired
        case .unauthorized?: self = .invalidToken
        case .stepOutOfOrder?: self = .stepOutOfOrder
        case .rateLimited?: self = .rateLimited
        default: self = .other(error)
        }
    }

    /// Whether the check cannot go on after this error.
    public var endsCheck: Bool {
        switch self {
        case .retryLimitReached, .expired, .alreadyFinished, .invalidToken, .cancelled, .other: true
        default: false
        }
    }

    /// The stable name of this kind of error, for logs and analytics (`wrong_code`, `step_out_of_order`, …); it
    /// never changes meaning.
    public var code: String {
        switch self {
        case .wrongCode: "wrong_code"
        case .invalidPhoneNumber: "invalid_phone_number"
        case .codeExpired: "code_expired"
        case .resendLimitReached: "resend_limit_reached"
        case .retryLimitReached: "retry_limit_reached"
        case .numberChangeLimitReached: "number_change_limit_reached"
        case .expired: "expired"
        case .alreadyFinished: "already_finished"
        case .stepOutOfOrder: "step_out_of_order"
        case .invalidToken: "invalid_token"
        case .rateLimited: "rate_limited"
        case .cancelled: "cancelled"
        case .other: "other"
        }
    }
}
