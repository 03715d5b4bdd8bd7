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
