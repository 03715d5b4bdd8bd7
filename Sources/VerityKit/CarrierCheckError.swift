import Foundation

/// Why the carrier check's front-channel step did not complete: each makes ``VerityPossession`` fall back to the
/// code by SMS.
public enum CarrierCheckError: Error, Sendable, Equatable {
    /// The device has no mobile-data path (Wi-Fi only, no SIM, mobile data off for the app).
    case noCellularPath
    /// The step did not complete in time.
    case timedOut
    /// Another failure: a refused connection, a malformed answer, a redirect loop, a redirect away from HTTPS.
    case failed(String)
}
