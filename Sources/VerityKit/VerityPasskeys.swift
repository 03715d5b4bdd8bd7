import Foundation
import VerityCore

/// Passkeys for a ``VeritySession``: register one for the signed-in user, and sign in with one, by a sheet or from
/// the keyboard's AutoFill suggestions.
///
/// The server's options are the standard WebAuthn JSON; VerityKit turns them into the platform's request, and the
/// platform's credential back into the standard JSON the server verifies. Sign-in stores and announces the session
/// as the code sign-in does.
///
/// The app's associated domains must list `webcredentials:<relying party id>`, which the server's
/// `/.well-known/apple-app-site-association` confirms.
///
/// ```swift
/// let passkeys = VerityPasskeys(
///     session: verity,
///     authenticator: AuthorizationControllerPasskeyAuthenticator { window })
/// try await passkeys.register()
/// let session = try await passkeys.signIn(loginId: "ada@example.com")
/// ```
public struct VerityPasskeys: Sendable {
    private let session: VeritySession
    private let authenticator: any PasskeyAuthenticator

    /// Creates the passkey client of a session.
    ///
    /// - Parameters:
    ///   - session: The session that registration uses and sign-in fills.
    ///   - authenticator: The platform's passkeys, for example `AuthorizationControllerPasskeyAuthenticator`.
    public init(session: VeritySession, authenticator: any PasskeyAuthenticator) {
        self.session = session
        self.authenticator = authenticator
    }

    /// Creates a passkey for the signed-in user and registers it with the server.
    ///
    /// - Throws: ``VerityKitError/notSignedIn`` without a session, ``PasskeyError`` when the platform made none,
    ///   ``VerityKitError`` when the server refuses.
    public func register() async throws {
        let session = session
        let response = try await session.withSession {
            try await session.send(.post, PasskeyRoute.registrationOptions, bearerToken: $0)
        }
        let options = try session.client.decode(WebAuthnJSON.CreationOptions.self, from: response, status: 200)
        let registration = try await authenticator.register(
            try PasskeyRegistrationRequest(options, defaultRelyingPartyId: defaultRelyingPartyId))
        let body = try VerityAPIClient.encode(registration.json)
        let verified = try await session.withSession {
            try await session.send(.post, PasskeyRoute.registrationVerify, encodedBody: body, bearerToken: $0)
        }
        try session.client.check(verified, status: 200)
    }

    /// Signs in with a passkey, showing the system's sheet.
    ///
    /// - Parameters:
    ///   - loginId: The user's login id, to offer only their passkeys; `nil` to offer every passkey of this relying
    ///     party on the device (discoverable credentials).
    ///   - sessionClaims: Claims every token of the new session carries, beside the user's custom claims (which win
    ///     a name both have), as ``VeritySession/startOTP(loginId:channel:locale:sessionClaims:)`` takes them.
    /// - Returns: The new session, which is stored and announced to ``VeritySession/sessionChanges()``.
    /// - Throws: ``PasskeyError`` when the user picked none, ``VerityKitError`` when the server refuses.
    public func signIn(loginId: String? = nil, sessionClaims: [String: JSONValue]? = nil) async throws -> Session {
        try await signIn(loginId: loginId, sessionClaims: sessionClaims, isAutoFill: false)
    }

    /// Signs in with the passkey the user picks from the keyboard's AutoFill suggestions: call it when the sign-in
    /// screen appears, with its user name field's content type set to `.username`; it returns when the user picks
    /// one. Cancel its task when the screen goes away.
    ///
    /// - Parameter sessionClaims: Claims every token of the new session carries, as ``signIn(loginId:sessionClaims:)``
    ///   takes them.
    /// - Returns: The new session.
    /// - Throws: ``PasskeyError`` when cancelled, ``VerityKitError`` when the server refuses.
    public func signInWithAutoFill(sessionClaims: [String: JSONValue]? = nil) async throws -> Session {
        try await signIn(loginId: nil, sessionClaims: sessionClaims, isAutoFill: true)
    }

    private func signIn(loginId: String?, sessionClaims: [String: JSONValue]?, isAutoFill: Bool) async throws
        -> Session
    {
        let body = try VerityAPIClient.encode(
            PasskeyRoute.AuthenticationOptionsRequest(loginId: loginId, sessionClaims: sessionClaims))
        let response = try await session.send(.post, PasskeyRoute.authenticationOptions, encodedBody: body)
        let options = try session.client.decode(WebAuthnJSON.RequestOptions.self, from: response, status: 200)
        let assertion = try await authenticator.assert(
            try PasskeyAssertionRequest(options, defaultRelyingPartyId: defaultRelyingPartyId, isAutoFill: isAutoFill))
        return try await session.signIn(
            at: PasskeyRoute.authenticationVerify, encodedBody: try VerityAPIClient.encode(assertion.json))
    }

    /// The relying party id when the options name none: the server's host, as a browser takes the origin's.
    private var defaultRelyingPartyId: String {
        session.configuration.baseURL.host ?? ""
    }
}
