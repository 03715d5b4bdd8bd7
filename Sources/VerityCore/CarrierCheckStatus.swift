import Foundation

/// Where a possession flow's carrier check stands: the mobile operator confirming, over the device's mobile-data
/// connection, that the device holds the flow's number (CAMARA Number Verification). Anything but `verified` leaves
/// the flow to a code, as without a carrier check.
public enum CarrierCheckStatus: String, WireEnum, Sendable {
    /// The start answered an authorization URL; the app has not come back through the operator yet.
    case pending
    /// The operator redirected back and Verity is asking it about the number.
    case checking
    /// The operator confirmed the number: the flow succeeded with method `silent`.
    case verified
    /// The operator answered that the device does not hold the number (`devicePhoneNumberVerified: false`).
    case notVerified = "not_verified"
    /// The operator did not answer within the project's carrier timeout.
    case timedOut = "timed_out"
    /// The operator refused the authorization step (no mobile-data path, no consent, a code it would not exchange).
    case authorizationFailed = "authorization_failed"
    /// The operator's API answered with an error Verity could not read as a yes or a no.
    case unavailable
}
