import Foundation

/// What the platform needs to create a passkey, read from the server's creation options.
public struct PasskeyRegistrationRequest: Sendable, Equatable {
    /// The relying party's id (a domain of the app's associated domains).
    public var relyingPartyId: String
    /// The server's challenge.
    public var challenge: Data
    /// The user's name, as the passkey shows it.
    public var userName: String
    /// The user's display name.
    public var displayName: String
    /// The user handle, opaque bytes.
    public var userId: Data
    /// Whether the user must be verified.
    public var userVerification: PasskeyUserVerification
    /// The `attestation` conveyance the server asks for (`none`, `indirect`, `direct`, `enterprise`).
    public var attestation: String
    /// The ids of the user's existing credentials, which must not be created again.
    public var excludedCredentialIds: [Data]

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - relyingPartyId: The relying party's id.
    ///   - challenge: The server's challenge.
    ///   - userName: The user's name.
    ///   - displayName: The user's display name.
    ///   - userId: The user handle.
    ///   - userVerification: Whether the user must be verified.
    ///   - attestation: The attestation conveyance.
    ///   - excludedCredentialIds: The ids of credentials not to create again.
    public init(
        relyingPartyId: String, challenge: Data, userName: String, displayName: String, userId: Data,
        userVerification: PasskeyUserVerification, attestation: String = "none", excludedCredentialIds: [Data] = []
    ) {
        self.relyingPartyId = relyingPartyId
        self.challenge = challenge
        self.userName = userName
        self.displayName = displayName
        self.userId = userId
        self.userVerification = userVerification
        self.attestation = attestation
        self.excludedCredentialIds = excludedCredentialIds
    }

    /// Reads the server's `PublicKeyCredentialCreationOptionsJSON`.
    ///
    /// - Throws: ``VerityKitError/mapping(_:)`` when a binary member is not base64url or the server takes no ES256.
    init(_ options: WebAuthnJSON.CreationOptions, defaultRelyingPartyId: String) throws {
        let acceptsES256 = options.pubKeyCredParams.contains {
            $0.type == WebAuthnJSON.publicKey && $0.alg == WebAuthnJSON.es256
        }
        guard acceptsES256 else {
            throw VerityKitError.mapping("The passkey options do not accept ES256, which passkeys use.")
        }
        self.init(
            relyingPartyId: options.rp.id ?? defaultRelyingPartyId,
            challenge: try WebAuthnJSON.bytes(options.challenge, "challenge"), userName: options.user.name,
            displayName: options.user.displayName, userId: try WebAuthnJSON.bytes(options.user.id, "user.id"),
            userVerification: PasskeyUserVerification(options.authenticatorSelection?.userVerification),
            attestation: options.attestation ?? "none",
            excludedCredentialIds: try WebAuthnJSON.credentialIds(options.excludeCredentials, "excludeCredentials"))
    }
}
