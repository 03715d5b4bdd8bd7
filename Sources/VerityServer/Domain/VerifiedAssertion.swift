/// An assertion that passed every check.
struct VerifiedAssertion: Sendable, Equatable {
    /// The counter to store from now on.
    var signCount: UInt32
    /// Whether the user was verified (UV).
    var userVerified: Bool
    /// Whether the credential is backed up now (BS), which may change over its life.
    var backedUp: Bool
    /// Whether the credential is a synced, multi-device passkey (BE).
    var backupEligible: Bool

    /// The RFC 8176 methods the assertion proves: `swk` for a synced (software-held) key, `hwk` for a key bound to
    /// its device, and `user` when the authenticator verified the user.
    var amr: [String] {
        Self.amr(backupEligible: backupEligible, userVerified: userVerified)
    }

    /// `mfa` when the user was verified: a UV passkey is a multi-factor authenticator (NIST SP 800-63B).
    var acr: String? {
        Self.acr(userVerified: userVerified)
    }

    /// The RFC 8176 methods a passkey proves by its BE and UV flags (see ``amr``), at sign-in or at registration.
    static func amr(backupEligible: Bool, userVerified: Bool) -> [String] {
        [backupEligible ? "swk" : "hwk"] + (userVerified ? ["user"] : [])
    }

    /// The `acr` a passkey proves by its UV flag (see ``acr``).
    static func acr(userVerified: Bool) -> String? {
        userVerified ? "mfa" : nil
    }
}
