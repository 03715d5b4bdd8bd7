import Foundation

/// What an authentication ceremony asks of the client (WebAuthn `PublicKeyCredentialRequestOptions`), face-neutral.
struct PasskeyRequestOptions: Sendable, Equatable {
    var challenge: [UInt8]
    var rpID: String
    /// How long the client may take, in seconds (the challenge's lifetime).
    var timeout: Int
    /// The credentials a named user may answer with; empty for a discoverable sign-in without a login id.
    var allowCredentials: [PasskeyCredentialDescriptor]
    var userVerification: PasskeySettings.Requirement
}
