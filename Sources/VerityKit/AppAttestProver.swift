import Foundation
import VerityCore

/// Proves the app with App Attest: attests one key per installation, keeps its identifier in the secure store, and
/// signs an assertion over a fresh server challenge for each request.
///
/// Device failures come out as ``AppAttestError``; the server's refusals as ``VerityKitError``.
struct AppAttestProver: Sendable {
    let options: AppAttestOptions
    let client: VerityAPIClient
    let projectId: String
    let logger: VerityLogger

    /// The secure-store item that holds the attested key's identifier, per project.
    var storageKey: String { "verity.app-attest.\(projectId)" }

    var isSupported: Bool { options.service.isSupported }

    /// The attested key of this installation, attesting a new one when there is none.
    func attestedKeyId() async throws -> String {
        if let keyId = try storedKeyId() { return keyId }
        let keyId = try await options.service.generateKey()
        let challenge = try await newChallenge()
        let attestation = try await options.service.attestKey(
            keyId, clientDataHash: AppAttestRoute.attestationHash(challenge: challenge))
        let body = AppAttestKeyRequest(
            keyId: keyId, attestationObject: attestation.base64EncodedString(), challenge: challenge)
        let response = try await client.send(
            .post, AppAttestRoute.keys, body: try VerityAPIClient.encode(body),
            headers: [AuthHeaders.project: projectId], bearerToken: nil)
        try client.check(response, status: 201)
        try options.store.set(Data(keyId.utf8), forKey: storageKey, deviceBound: true)
        logger.log(.info, "App Attest key attested")
        return keyId
    }

    /// A proof for one request: an assertion by `keyId` over a fresh challenge.
    func proof(keyId: String) async throws -> String {
        let challenge = try await newChallenge()
        let assertion = try await options.service.generateAssertion(
            keyId, clientDataHash: AppAttestRoute.assertionHash(challenge: challenge))
        return AppAttestProof.header(keyId: keyId, challenge: challenge, assertion: assertion)
    }

    /// Forgets the attested key, so that the next proof attests a new one.
    func forgetKey() throws {
        try options.store.removeData(forKey: storageKey)
    }

    /// The stored key identifier, unless this is a new installation: App Attest keys do not survive a reinstall,
    /// though the Keychain keeps their identifiers.
    func storedKeyId() throws -> String? {
        if !options.installationMarker.isPresent {
            try forgetKey()
            options.installationMarker.setPresent()
            return nil
        }
        return try options.store.data(forKey: storageKey).map { String(decoding: $0, as: UTF8.self) }
    }

    private func newChallenge() async throws -> String {
        let response = try await client.send(
            .post, AppAttestRoute.challenges, headers: [AuthHeaders.project: projectId], bearerToken: nil)
        return try client.decode(AppAttestChallenge.self, from: response, status: 201).challenge
    }
}
