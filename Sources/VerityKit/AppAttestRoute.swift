import Crypto
import Foundation
import VerityCore

/// The App Attest wire protocol, in one place: the server side is written apart from this client, so every path,
/// field and format is named here for the two to be aligned.
enum AppAttestRoute {
    /// `POST`, with the project header: a single-use challenge, answered `201` with ``Challenge``.
    static let challenges = "v1/auth/app-attest/challenges"
    /// `POST` ``Attestation``, with the project header: registers an attested key, answered `201`.
    static let keys = "v1/auth/app-attest/keys"

    /// A challenge as the server answers it.
    struct Challenge: Decodable, Sendable {
        /// The challenge, opaque text that the client data embeds.
        let challenge: String
    }

    /// The attestation of a new key.
    struct Attestation: Encodable, Sendable {
        /// The key's identifier from the device (base64, as DeviceCheck gives it).
        let keyId: String
        /// The attestation object, base64.
        let attestation: String
        /// The challenge the attestation answers.
        let challenge: String
    }

    /// The client data whose SHA-256 the device attests or signs: the challenge's UTF-8 bytes.
    static func clientDataHash(challenge: String) -> Data {
        Data(SHA256.hash(data: Data(challenge.utf8)))
    }

    /// The ``AuthHeaders/appVerification`` value that carries an assertion, where a silent-push proof goes
    /// (`<id>.<secret>`): `appattest.<keyId>.<challenge>.<assertion>`, the key id and assertion in base64url.
    static func proof(keyId: String, challenge: String, assertion: Data) -> String {
        let keyId = Base64URL.encode(Data(base64Encoded: keyId) ?? Data(keyId.utf8))
        return "appattest.\(keyId).\(challenge).\(Base64URL.encode(assertion))"
    }

    /// Whether a proof carried an assertion.
    static func isAssertion(_ proof: String?) -> Bool {
        proof?.hasPrefix("appattest.") ?? false
    }
}
