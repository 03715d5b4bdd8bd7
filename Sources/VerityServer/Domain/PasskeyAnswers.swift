import Foundation

/// A registration answer (`AuthenticatorAttestationResponse`), decoded from whatever wire form a face speaks.
struct PasskeyRegistrationAnswer: Sendable {
    /// The credential id the client reports (`rawId`); it must match the attested one.
    var credentialID: Data
    /// `clientDataJSON`, as the client sent it (its hash is signed).
    var clientDataJSON: Data
    /// The CBOR attestation object.
    var attestationObject: Data
    /// The transports the client reports (`usb`, `nfc`, `ble`, `internal`, `hybrid`), kept as hints.
    var transports: [String] = []
}

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

/// What the relying party keeps of a credential to check later assertions.
struct StoredPasskey: Sendable, Equatable {
    /// The credential id.
    var credentialID: Data
    /// The COSE_Key exactly as the authenticator sent it.
    var publicKeyCBOR: Data
    /// The last signature counter seen.
    var signCount: UInt32
    /// The BE flag seen at registration; it never changes for a credential.
    var backupEligible: Bool
}

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
}

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
        [backupEligible ? "swk" : "hwk"] + (userVerified ? ["user"] : [])
    }

    /// `mfa` when the user was verified: a UV passkey is a multi-factor authenticator (NIST SP 800-63B).
    var acr: String? {
        userVerified ? "mfa" : nil
    }
}
