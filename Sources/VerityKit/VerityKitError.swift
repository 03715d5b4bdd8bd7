import Foundation
import VerityCore

/// Everything that can go wrong in VerityKit, by kind.
///
/// Branch on the case or on ``code`` (stable across releases), never on the description. When the server refused a
/// request, ``server(_:)`` carries its problem document, and ``serverErrorCode`` says why, for example that a challenge
/// expired or was already answered.
public enum VerityKitError: Error, Sendable, Equatable {
    /// No HTTP answer was obtained (no connection, timeout, TLS failure); the message describes the failure.
    case network(String)
    /// The server answered with an error; the problem document says which.
    ///
    /// When an error answer carried no problem document (a proxy's error page, say), the problem is made up from
    /// the HTTP status: its `code` is the generic code for that status and its `status` the real one.
    case server(Problem)
    /// The server's answer, or a push payload, is not what VerityKit expects.
    case mapping(String)
    /// The secure store failed to read or write.
    case storage(String)
    /// An argument is not valid: an unknown factor, a malformed identifier or push payload, an empty token.
    case input(String)
    /// A device key could not be created, read or used.
    case keyStorage(String)
    /// The SDK is not configured correctly, for example its base URL is not an HTTP(S) URL.
    case initialization(String)
    /// A token needed to authenticate could not be produced: the enrollment token is gone, signing failed, or
    /// ``VeritySession`` has no session (``notSignedIn``).
    case authenticationToken(String)
    /// The challenge needs the owner verified and they were not (cancelled, failed, unavailable, or the factor has no
    /// user-verification key); nothing was approved. The challenge stays pending unless the app denies it.
    case userVerification(UserVerificationResult)

    /// What ``VeritySession`` throws when it has no session: no one signed in on this device, or the session ended
    /// (signed out, revoked, or its refresh token was refused). Its ``code`` is `authentication_token`; compare with
    /// `==` to tell it apart, for example `catch let error as VerityKitError where error == .notSignedIn`.
    public static let notSignedIn = VerityKitError.authenticationToken("No one is signed in.")

    /// The stable code of this kind of error: `network`, `server`, `mapping`, `storage`, `input`, `key_storage`,
    /// `initialization`, `authentication_token` or `user_verification`.
    public var code: String {
        switch self {
        case .network: "network"
        case .server: "server"
        case .mapping: "mapping"
        case .storage: "storage"
        case .input: "input"
        case .keyStorage: "key_storage"
        case .initialization: "initialization"
        case .authenticationToken: "authentication_token"
        case .userVerification: "user_verification"
        }
    }

    /// The server's problem document, for ``server(_:)``.
    public var problem: Problem? {
        if case .server(let problem) = self { return problem }
        return nil
    }

    /// The server's error code for ``server(_:)``, when this version of VerityCore knows it.
    ///
    /// A newer server may send codes this client does not know; ``problem``'s `code` always has the raw string.
    public var serverErrorCode: ErrorCode? {
        problem?.errorCode
    }
}

extension VerityKitError: LocalizedError {
    /// A sentence describing the error, for people.
    public var errorDescription: String? {
        switch self {
        case .network(let message): "The Verity server could not be reached: \(message)"
        case .server(let problem):
            if let detail = problem.detail {
                "The Verity server refused the request (\(problem.code)): \(detail)"
            } else {
                "The Verity server refused the request (\(problem.code)): \(problem.title)"
            }
        case .mapping(let message): "Unexpected data: \(message)"
        case .storage(let message): "The secure store failed: \(message)"
        case .input(let message): "Invalid input: \(message)"
        case .keyStorage(let message): "The device key failed: \(message)"
        case .initialization(let message): "VerityKit is not configured correctly: \(message)"
        case .userVerification(let result):
            "The owner's verification did not succeed (\(result.rawValue)); the challenge was not approved."
        case .authenticationToken(let message): "No authentication token: \(message)"
        }
    }
}
