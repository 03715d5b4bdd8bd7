import VerityCore

extension PublicKeyCredentialRequestOptionsJSON {
    /// The authentication options as the native API answers them.
    init(_ options: PasskeyRequestOptions) {
        self.init(
            challenge: options.challenge, rpId: options.rpID, timeout: options.timeout * 1000,
            allowCredentials: options.allowCredentials.map(PublicKeyCredentialDescriptorJSON.init),
            userVerification: options.userVerification.rawValue)
    }
}
