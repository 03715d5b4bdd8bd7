/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5): the authentication options as the server writes
/// them and VerityKit reads them, for `PublicKeyCredential.parseRequestOptionsFromJSON`. Binary members are base64url.
/// What a client may go without is optional.
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable {
    /// The challenge, base64url.
    public var challenge: String
    /// The relying party id; a client takes its origin's host when there is none.
    public var rpId: String?
    /// Milliseconds, as WebAuthn counts them.
    public var timeout: Int?
    /// The credentials a named user may answer with; empty or absent for a discoverable credential.
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    /// `required`, `preferred` or `discouraged`.
    public var userVerification: String?

    /// The options of a ceremony that lasts `timeout` milliseconds.
    public init(
        challenge: some Sequence<UInt8>, rpId: String, timeout: Int,
        allowCredentials: [PublicKeyCredentialDescriptorJSON], userVerification: String
    ) {
        self.challenge = Base64URL.encode(challenge)
        self.rpId = rpId
        self.timeout = timeout
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }
}
