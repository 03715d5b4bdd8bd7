import Foundation

/// An attestation object (WebAuthn §6.5.4): the attestation statement format, the statement and the authenticator
/// data. App Attest sends the same structure.
struct AttestationObject: Sendable {
    /// The attestation statement format identifier (`none`, `packed`, `apple-appattest`…).
    let format: String
    /// The attestation statement, a map whose shape the format defines.
    let statement: CBORValue
    /// The parsed authenticator data.
    let authenticatorData: AuthenticatorData

    /// Parses the CBOR attestation object in `bytes`.
    init(_ bytes: some DataProtocol, decoder: CBORDecoder = CBORDecoder()) throws(AuthenticatorDataError) {
        let value: CBORValue
        do { value = try decoder.decode(bytes) } catch { throw .malformedCBOR(error) }
        guard let format = value["fmt"]?.text, let statement = value["attStmt"], statement.map != nil,
            let authData = value["authData"]?.bytes
        else { throw .malformedAttestationObject }
        self.format = format
        self.statement = statement
        authenticatorData = try AuthenticatorData(authData, decoder: decoder)
    }
}
