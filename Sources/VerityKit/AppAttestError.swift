import Foundation

/// Why the device could not attest or assert: each makes ``VerityAppVerification`` fall back to the silent push.
public enum AppAttestError: Error, Sendable, Equatable {
    /// This device or platform has no App Attest.
    case unsupported
    /// The key is gone or no longer valid (a reinstall, a restored backup): a new one must be attested.
    case invalidKey
    /// Another device failure (Apple's service unreachable, a system failure); the message says which.
    case failed(String)
}
