import Foundation

/// What a registration ceremony asks of the client (WebAuthn `PublicKeyCredentialCreationOptions`), face-neutral: a
/// face writes it in its own JSON form.
struct PasskeyCreationOptions: Sendable, Equatable {
    var challenge: [UInt8]
    var rpID: String
    var rpName: String
    /// The user handle: opaque bytes that name the user to the authenticator, never a login id.
    var userHandle: Data
    var userName: String
    var userDisplayName: String
    /// COSE algorithms, in the relying party's order of preference.
    var algorithms: [COSEPublicKey.Algorithm]
    /// How long the client may take, in seconds (the challenge's lifetime).
    var timeout: Int
    /// The user's existing credentials, so an authenticator that holds one does not make a second.
    var excludeCredentials: [PasskeyCredentialDescriptor]
    var attachment: PasskeySettings.Attachment?
    var residentKey: PasskeySettings.Requirement
    var userVerification: PasskeySettings.Requirement
    var attestation: PasskeySettings.Attestation
}
