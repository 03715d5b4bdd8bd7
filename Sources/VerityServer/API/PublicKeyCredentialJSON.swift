import Foundation
import VerityCore

/// The standard JSON serialisation of a `PublicKeyCredential` (WebAuthn Level 3 §5.1, `toJSON()`): what the native
/// API takes as a registration or an authentication answer. Binary fields are base64url.
struct PublicKeyCredentialJSON: Decodable, Sendable {
    /// The response part, which holds the fields of either ceremony.
    struct Response: Decodable, Sendable {
        var clientDataJSON: String
        var attestationObject: String?
        var transports: [String]?
        var authenticatorData: String?
        var signature: String?
        var userHandle: String?
    }

    /// The largest client data and attestation object taken, far above what authenticators send.
    static let maximumClientDataLength = 4096
    static let maximumAttestationObjectLength = 64 * 1024

    var id: String
    var rawId: String
    var type: String
    var response: Response

    /// The registration answer, or `invalid_request` naming the field that is missing or not base64url.
    func registrationAnswer() throws(VerityError) -> PasskeyRegistrationAnswer {
        let credentialID = try credentialID()
        guard let attestationObject = response.attestationObject else { throw Self.missing("attestationObject") }
        return PasskeyRegistrationAnswer(
            credentialID: credentialID, clientDataJSON: try clientData(),
            attestationObject: try Self.bytes(
                attestationObject, "attestationObject", Self.maximumAttestationObjectLength),
            transports: Array((response.transports ?? []).prefix(8)))
    }

    /// The authentication answer, or `invalid_request` naming the field that is missing or not base64url.
    func assertionAnswer() throws(VerityError) -> PasskeyAssertionAnswer {
        let credentialID = try credentialID()
        guard let authenticatorData = response.authenticatorData else { throw Self.missing("authenticatorData") }
        guard let signature = response.signature else { throw Self.missing("signature") }
        return PasskeyAssertionAnswer(
            credentialID: credentialID, clientDataJSON: try clientData(),
            authenticatorData: try Self.bytes(
                authenticatorData, "authenticatorData", Self.maximumAttestationObjectLength),
            signature: try Self.bytes(signature, "signature", 1024),
            userHandle: try response.userHandle.map { (handle) throws(VerityError) in
                try Self.bytes(handle, "userHandle", 64)
            })
    }

    private func credentialID() throws(VerityError) -> Data {
        guard type == "public-key" else { throw VerityError(.invalidRequest, "type must be public-key.") }
        guard id == rawId else { throw VerityError(.invalidRequest, "id and rawId must be the same credential id.") }
        let bytes = try Self.bytes(rawId, "rawId", AuthenticatorData.maximumCredentialIDLength)
        guard !bytes.isEmpty else { throw VerityError(.invalidRequest, "rawId must not be empty.") }
        return bytes
    }

    private func clientData() throws(VerityError) -> Data {
        try Self.bytes(response.clientDataJSON, "clientDataJSON", Self.maximumClientDataLength)
    }

    private static func bytes(_ text: String, _ field: String, _ limit: Int) throws(VerityError) -> Data {
        guard text.utf8.count <= (limit * 4 + 2) / 3, let bytes = Base64URL.decode(text) else {
            throw VerityError(.invalidRequest, "\(field) must be base64url of at most \(limit) bytes.")
        }
        return Data(bytes)
    }

    private static func missing(_ field: String) -> VerityError {
        VerityError(.invalidRequest, "response.\(field) is required.")
    }
}
