import Foundation

/// How ``VerityAppVerification`` proved the app to the server the last time it had to.
public enum AppVerificationMethod: String, Sendable, Equatable {
    /// An assertion signed by an App Attest key that Apple certified.
    case appAttest = "app_attest"
    /// The secret of a silent push that only the real app receives.
    case silentPush = "silent_push"
}
