import Foundation

/// Why the platform made no passkey or assertion.
public enum PasskeyError: Error, Sendable, Equatable {
    /// The user cancelled, or had no passkey to offer.
    case cancelled
    /// The user already has a passkey for this account on this device (an excluded credential matched).
    case alreadyRegistered
    /// This platform has no passkeys.
    case unsupported
    /// Another failure; the message says which.
    case failed(String)
}
