import VerityCore

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5): the authentication options as the native API
/// answers them, for `PublicKeyCredential.parseRequestOptionsFromJSON`.
struct PublicKeyCredentialRequestOptionsJSON: Encodable, Sendable {
    var challenge: String
    var rpId: String
    /// Milliseconds, as WebAuthn counts them.
    var timeout: Int
    var allowCredentials: [PublicKeyCredentialCreationOptionsJSON.Descriptor]
    var userVerification: String

    init(_ options: PasskeyRequestOptions) {
        challenge = Base64URL.encode(options.challenge)
        rpId = options.rpID
        timeout = options.timeout * 1000
        allowCredentials = options.allowCredentials.map(PublicKeyCredentialCreationOptionsJSON.Descriptor.init)
        userVerification = options.userVerification.rawValue
    }
}
