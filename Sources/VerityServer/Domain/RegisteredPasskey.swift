import Foundation

/// A registration that passed every check: what to store.
struct RegisteredPasskey: Sendable, Equatable {
    var credential: StoredPasskey
    /// Whether the credential was backed up at registration (BS).
    var backedUp: Bool
    /// Whether the user was verified (UV).
    var userVerified: Bool
    /// The authenticator model (16 bytes).
    var aaguid: Data
    /// The attestation statement format that was checked (`none` or `packed`).
    var attestationFormat: String
    /// The transports the client reported.
    var transports: [String]

    /// The RFC 8176 methods the registration proves, as an assertion by the same passkey would (a sign-up signs in).
    var amr: [String] {
        VerifiedAssertion.amr(backupEligible: credential.backupEligible, userVerified: userVerified)
    }

    /// `mfa` when the user was verified.
    var acr: String? {
        VerifiedAssertion.acr(userVerified: userVerified)
    }
}
