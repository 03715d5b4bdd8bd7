import Foundation
import VerityCore

/// The native passkey API's paths, in one place: the server side is written apart from this client, so every path
/// is named here for the two to be aligned. Each options answer is the standard JSON form of the options, and each
/// verify request the standard JSON serialisation of the `PublicKeyCredential` (``WebAuthnJSON``).
enum PasskeyRoute {
    /// `POST`, with the session token: creation options for the signed-in user.
    static let registrationOptions = "v1/auth/passkeys/registration/options"
    /// `POST` the registration, with the session token: answered `200` or `201`.
    static let registrationVerify = "v1/auth/passkeys/registration/verify"
    /// `POST` ``AuthenticationOptionsRequest``: request options, for a named user or for any (discoverable).
    static let authenticationOptions = "v1/auth/passkeys/authentication/options"
    /// `POST` the assertion: answered `200` with a sign-in answer (`AuthResponse`).
    static let authenticationVerify = "v1/auth/passkeys/authentication/verify"

    /// The body of ``authenticationOptions``.
    struct AuthenticationOptionsRequest: Encodable, Sendable {
        /// The user's login id, or `nil` for a discoverable credential.
        let loginId: String?
        /// Claims the session is to carry, if any.
        let sessionClaims: [String: JSONValue]?
    }
}
