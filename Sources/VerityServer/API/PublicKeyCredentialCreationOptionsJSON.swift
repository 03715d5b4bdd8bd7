import VerityCore

extension PublicKeyCredentialCreationOptionsJSON {
    /// The registration options as the native API answers them.
    init(_ options: PasskeyCreationOptions) {
        self.init(
            rpId: options.rpID, rpName: options.rpName, userHandle: options.userHandle, userName: options.userName,
            userDisplayName: options.userDisplayName, challenge: options.challenge,
            algorithms: options.algorithms.map(\.rawValue), timeout: options.timeout * 1000,
            excludeCredentials: options.excludeCredentials.map(PublicKeyCredentialDescriptorJSON.init),
            authenticatorAttachment: options.attachment?.rawValue, residentKey: options.residentKey.rawValue,
            userVerification: options.userVerification.rawValue, attestation: options.attestation.rawValue)
    }
}

extension PublicKeyCredentialDescriptorJSON {
    init(_ descriptor: PasskeyCredentialDescriptor) {
        self.init(id: descriptor.id, transports: descriptor.transports)
    }
}
