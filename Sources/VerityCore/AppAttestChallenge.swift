import Foundation

/// A single-use App Attest challenge (`POST /v1/auth/app-attest/challenges`): what an app attests a new key over
/// (`DCAppAttestService.attestKey(_:clientDataHash:)` with the SHA-256 of the challenge's UTF-8), or binds into the
/// client data of an assertion (``AppAttestProof/clientData(challenge:)``). It works once, for five
/// minutes.
public struct AppAttestChallenge: Codable, Sendable, Equatable {
    /// The challenge, base64url text.
    public var challenge: String
    /// Until when it works.
    public var expiresAt: Date

    public init(challenge: String, expiresAt: Date) {
        self.challenge = challenge
        self.expiresAt = expiresAt
    }
}
