import Foundation

/// The platform's passkey authenticator: creates passkeys and signs in with them, showing the system's sheet (or,
/// for AutoFill, the keyboard's suggestions).
///
/// `AuthorizationControllerPasskeyAuthenticator` is the real one, on Apple platforms (AuthenticationServices);
/// ``UnsupportedPasskeyAuthenticator`` stands in elsewhere, and tests inject a scripted one.
public protocol PasskeyAuthenticator: Sendable {
    /// Creates a passkey.
    ///
    /// - Parameter request: What the server's creation options ask for.
    /// - Returns: The new credential.
    /// - Throws: ``PasskeyError``.
    func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration

    /// Signs the server's challenge with a passkey the user picks.
    ///
    /// - Parameter request: What the server's request options ask for.
    /// - Returns: The assertion.
    /// - Throws: ``PasskeyError``.
    func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion
}

/// The ``PasskeyAuthenticator`` of a platform without passkeys: every request throws
/// ``PasskeyError/unsupported``.
public struct UnsupportedPasskeyAuthenticator: PasskeyAuthenticator {
    /// Creates the authenticator.
    public init() {}

    /// Always throws ``PasskeyError/unsupported``.
    public func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
        throw PasskeyError.unsupported
    }

    /// Always throws ``PasskeyError/unsupported``.
    public func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
        throw PasskeyError.unsupported
    }
}
