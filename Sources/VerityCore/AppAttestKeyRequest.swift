import Foundation

/// An App Attest key for the server to verify and keep (`POST /v1/auth/app-attest/keys`), made once per install.
public struct AppAttestKeyRequest: Codable, Sendable, Equatable {
    /// The key id `DCAppAttestService.generateKey()` answered (standard base64 of 32 bytes).
    public var keyId: String
    /// The attestation object `attestKey(_:clientDataHash:)` answered, standard base64.
    public var attestationObject: String
    /// The challenge (``AppAttestChallenge``) whose SHA-256 was the attestation's client data hash.
    public var challenge: String

    public init(keyId: String, attestationObject: String, challenge: String) {
        self.keyId = keyId
        self.attestationObject = attestationObject
        self.challenge = challenge
    }
}
