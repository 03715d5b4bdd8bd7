/// The flags byte of authenticator data (WebAuthn §6.1).
struct AuthenticatorFlags: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// The flags in `rawValue`.
    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// UP: the user was present.
    static let userPresent = AuthenticatorFlags(rawValue: 1 << 0)
    /// UV: the user was verified (biometrics, PIN).
    static let userVerified = AuthenticatorFlags(rawValue: 1 << 2)
    /// BE: the credential may be backed up (a synced, multi-device passkey).
    static let backupEligible = AuthenticatorFlags(rawValue: 1 << 3)
    /// BS: the credential is backed up right now.
    static let backedUp = AuthenticatorFlags(rawValue: 1 << 4)
    /// AT: attested credential data follows.
    static let attestedCredentialData = AuthenticatorFlags(rawValue: 1 << 6)
    /// ED: extension data follows.
    static let extensionData = AuthenticatorFlags(rawValue: 1 << 7)
}
