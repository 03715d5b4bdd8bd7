import Foundation

/// What the platform needs to sign in with a passkey, read from the server's request options.
public struct PasskeyAssertionRequest: Sendable, Equatable {
    /// The relying party's id.
    public var relyingPartyId: String
    /// The server's challenge.
    public var challenge: Data
    /// The credentials the server accepts; empty for any discoverable one of this relying party.
    public var allowedCredentialIds: [Data]
    /// Whether the user must be verified.
    public var userVerification: PasskeyUserVerification
    /// Whether the request waits in the keyboard's AutoFill suggestions rather than showing a sheet.
    public var isAutoFill: Bool

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - relyingPartyId: The relying party's id.
    ///   - challenge: The server's challenge.
    ///   - allowedCredentialIds: The credentials the server accepts; empty for any discoverable one.
    ///   - userVerification: Whether the user must be verified.
    ///   - isAutoFill: Whether the request waits in the keyboard's AutoFill suggestions.
    public init(
        relyingPartyId: String, challenge: Data, allowedCredentialIds: [Data] = [],
        userVerification: PasskeyUserVerification, isAutoFill: Bool = false
    ) {
        self.relyingPartyId = relyingPartyId
        self.challenge = challenge
        self.allowedCredentialIds = allowedCredentialIds
        self.userVerification = userVerification
        self.isAutoFill = isAutoFill
    }

    /// Reads the server's `PublicKeyCredentialRequestOptionsJSON`.
    ///
    /// - Throws: ``VerityKitError/mapping(_:)`` when a binary member is not base64url.
    init(_ options: WebAuthnJSON.RequestOptions, defaultRelyingPartyId: String, isAutoFill: Bool) throws {
        self.init(
            relyingPartyId: options.rpId ?? defaultRelyingPartyId,
            challenge: try WebAuthnJSON.bytes(options.challenge, "challenge"),
            allowedCredentialIds: try WebAuthnJSON.credentialIds(options.allowCredentials, "allowCredentials"),
            userVerification: PasskeyUserVerification(options.userVerification), isAutoFill: isAutoFill)
    }
}
