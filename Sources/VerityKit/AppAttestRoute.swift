import Crypto
import Foundation
import VerityCore

/// The App Attest routes; their bodies are VerityCore's wire types (``AppAttestChallenge``, ``AppAttestKeyRequest``,
/// ``AppAttestProof``), which the server decodes too.
enum AppAttestRoute {
    /// `POST`, with the project header: a single-use challenge, answered `201` with an ``AppAttestChallenge``.
    static let challenges = "v1/auth/app-attest/challenges"
    /// `POST` an ``AppAttestKeyRequest``, with the project header: registers an attested key, answered `201`.
    static let keys = "v1/auth/app-attest/keys"

    /// The client data hash a new key is attested over: the SHA-256 of the challenge's UTF-8 text.
    static func attestationHash(challenge: String) -> Data {
        Data(SHA256.hash(data: Data(challenge.utf8)))
    }

    /// The client data hash an assertion signs: the SHA-256 of ``AppAttestProof/clientData(challenge:)``.
    static func assertionHash(challenge: String) -> Data {
        Data(SHA256.hash(data: AppAttestProof.clientData(challenge: challenge)))
    }

    /// Whether a proof carried an assertion.
    static func isAssertion(_ proof: String?) -> Bool {
        proof?.hasPrefix("\(AppAttestProof.scheme).") ?? false
    }
}
