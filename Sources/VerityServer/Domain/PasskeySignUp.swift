import VerityCore

/// A sign-up by passkey that is asked for but not proven: the user its registration challenge will create. The user
/// is written only when the answer is accepted, so a refused or abandoned sign-up leaves nobody behind.
struct PasskeySignUp: Sendable, Equatable {
    /// The id the user will have, which the authenticator already holds as the credential's user handle.
    var userId: String
    /// The login ids the user will hold, normalised.
    var loginIds: [String]
    /// Claims the client asked the sign-up's session to carry (checked), if any: read back with the spent challenge.
    var sessionClaims: [String: JSONValue]? = nil
}
