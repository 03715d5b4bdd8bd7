import Foundation

/// An authentication answer (`AuthenticatorAssertionResponse`), decoded from whatever wire form a face speaks.
struct PasskeyAssertionAnswer: Sendable {
    /// The credential id (`rawId`).
    var credentialID: Data
    /// `clientDataJSON`, as the client sent it.
    var clientDataJSON: Data
    /// The authenticator data, as the authenticator signed it.
    var authenticatorData: Data
    /// The signature over the authenticator data and the client data hash.
    var signature: Data
    /// The user handle a discoverable credential returns.
    var userHandle: Data?
}
