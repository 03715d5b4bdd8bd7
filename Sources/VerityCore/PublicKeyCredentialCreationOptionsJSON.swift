/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4): the registration options as the server writes
/// them and VerityKit reads them, for `PublicKeyCredential.parseCreationOptionsFromJSON`. Binary members are
/// base64url. What a client may go without is optional.
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable {
    /// `PublicKeyCredentialRpEntity`.
    public struct RelyingParty: Codable, Sendable {
        /// The relying party id; a client takes its origin's host when there is none.
        public var id: String?
        public var name: String
    }

    /// `PublicKeyCredentialUserEntityJSON`.
    public struct User: Codable, Sendable {
        /// The user handle, base64url: opaque bytes that name the user to the authenticator.
        public var id: String
        public var name: String
        public var displayName: String
    }

    /// `PublicKeyCredentialParameters`: a credential type and a COSE algorithm the relying party takes.
    public struct Parameter: Codable, Sendable {
        public var type: String
        public var alg: Int
    }

    /// `AuthenticatorSelectionCriteria`.
    public struct Selection: Codable, Sendable {
        /// `platform` or `cross-platform`; absent for either.
        public var authenticatorAttachment: String?
        /// `required`, `preferred` or `discouraged`, for a discoverable credential.
        public var residentKey: String?
        /// Whether `residentKey` is `required` (WebAuthn Level 1's form of it).
        public var requireResidentKey: Bool?
        /// `required`, `preferred` or `discouraged`.
        public var userVerification: String?
    }

    public var rp: RelyingParty
    public var user: User
    /// The challenge, base64url.
    public var challenge: String
    /// The algorithms the relying party takes, in its order of preference.
    public var pubKeyCredParams: [Parameter]
    /// Milliseconds, as WebAuthn counts them.
    public var timeout: Int?
    /// The user's existing credentials, so an authenticator that holds one does not make a second.
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var authenticatorSelection: Selection?
    /// The attestation conveyance: `none`, `indirect`, `direct` or `enterprise`.
    public var attestation: String?

    /// The options of a ceremony that lasts `timeout` milliseconds, for public-key credentials of the COSE
    /// `algorithms`.
    public init(
        rpId: String, rpName: String, userHandle: some Sequence<UInt8>, userName: String, userDisplayName: String,
        challenge: some Sequence<UInt8>, algorithms: [Int], timeout: Int,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON], authenticatorAttachment: String?, residentKey: String,
        userVerification: String, attestation: String
    ) {
        rp = RelyingParty(id: rpId, name: rpName)
        user = User(id: Base64URL.encode(userHandle), name: userName, displayName: userDisplayName)
        self.challenge = Base64URL.encode(challenge)
        pubKeyCredParams = algorithms.map { Parameter(type: "public-key", alg: $0) }
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        authenticatorSelection = Selection(
            authenticatorAttachment: authenticatorAttachment, residentKey: residentKey,
            requireResidentKey: residentKey == "required", userVerification: userVerification)
        self.attestation = attestation
    }
}
