import Crypto
import Foundation
import VerityCore

/// App Attest as a proof of the app (``ProjectSettings/appAttestEnabled``): single-use challenges, attested keys kept
/// per project, and the assertions ``AppVerificationService`` accepts in place of a silent-push proof.
///
/// Apple's checks are ``AppAttestVerifier``'s; this service adds what needs state: a challenge works once, in its
/// project, for ``challengeLifetime``; a key is attested once and used only in its project and environment; an
/// assertion's counter must exceed the last one stored, moved up in one conditional write.
struct AppAttestService: Sendable, UsesRuntime {
    /// How long a challenge works.
    static let challengeLifetime: TimeInterval = 300
    /// Challenges one client address may ask for, per project: one per send, so more than app verifications.
    static let perClientAddress = RateLimitPolicy(capacity: 30, period: 600)

    private let store: AppAttestStore
    let verifier: AppAttestVerifier
    let limiter: RateLimiter
    let runtime: Runtime

    init(
        store: AppAttestStore, verifier: AppAttestVerifier, limiter: RateLimiter, runtime: Runtime
    ) {
        self.store = store
        self.verifier = verifier
        self.limiter = limiter
        self.runtime = runtime
    }

    /// Issues a challenge for an attestation or an assertion.
    func challenge(clientAddress: String?, in project: Project) async throws -> AppAttestChallenge {
        _ = try Self.appId(of: project)
        let now = clock.now()
        try await limiter.take(
            "app-attest:\(project.id):\(AuthService.clientBucket(clientAddress))", Self.perClientAddress, now: now)
        let challenge = identifiers.secret(bytes: 32)
        let expiresAt = now.addingTimeInterval(Self.challengeLifetime)
        try await store.insertChallenge(
            hash: SecretHash.hex(challenge), projectId: project.id, expiresAt: expiresAt, now: now)
        return AppAttestChallenge(challenge: challenge, expiresAt: expiresAt)
    }

    /// Verifies a new key's attestation and keeps the key. The challenge is used up whatever the outcome.
    func register(_ request: AppAttestKeyRequest, in project: Project) async throws -> AppAttestKeyRegistered {
        let appId = try Self.appId(of: project)
        guard request.keyId.count <= 64, let keyId = Data(base64Encoded: request.keyId), keyId.count == 32 else {
            throw VerityError(.invalidRequest, "`keyId` must be the base64 key id DCAppAttestService answered.")
        }
        guard request.attestationObject.count <= 16_384, let object = Data(base64Encoded: request.attestationObject)
        else { throw VerityError(.invalidRequest, "`attestationObject` must be base64, at most 12 KiB.") }
        let now = clock.now()
        try await consume(request.challenge, in: project, now: now)
        let key: P256.Signing.PublicKey
        do throws(AppAttestVerifier.Failure) {
            key = try await verifier.attestation(
                object, keyId: keyId, challenge: Data(request.challenge.utf8), appId: appId,
                environment: project.settings.appAttestEnvironment, now: now)
        } catch { throw Self.refused(error) }
        guard
            try await store.insertKey(
                keyId: request.keyId, publicKey: key.x963Representation,
                environment: project.settings.appAttestEnvironment, projectId: project.id, now: now)
        else { throw VerityError(.conflict, "This App Attest key is attested already.") }
        return AppAttestKeyRegistered(keyId: request.keyId)
    }

    /// Checks an assertion proof (``AppAttestProof``) for one send: a challenge of the project, unused;
    /// a key the project attested in its current environment; Apple's checks; a counter above the last one.
    /// - Throws: `app_verification_required` when any of them fails.
    func requireAssertion(_ proof: String, in project: Project) async throws {
        guard let appId = project.settings.appAttestAppId else {
            throw AppVerificationService.required("This project does not accept App Attest.")
        }
        let fields = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard proof.utf8.count <= 4096, fields.count == 4, fields[0] == AppAttestProof.scheme,
            let assertion = Base64URL.decode(String(fields[3]))
        else { throw AppVerificationService.required("The App Attest proof is malformed.") }
        let (keyId, challenge) = (String(fields[1]), String(fields[2]))
        let now = clock.now()
        try await consume(challenge, in: project, now: now)
        guard let stored = try await store.key(keyId: keyId, projectId: project.id),
            stored.environment == project.settings.appAttestEnvironment,
            let key = try? P256.Signing.PublicKey(x963Representation: stored.publicKey)
        else { throw AppVerificationService.required("This App Attest key is not attested in this project.") }
        let counter: UInt32
        do throws(AppAttestVerifier.Failure) {
            counter = try verifier.assertion(
                Data(assertion), clientData: AppAttestProof.clientData(challenge: challenge),
                key: key, appId: appId)
        } catch { throw Self.refused(error) }
        guard try await store.advanceCounter(keyId: keyId, projectId: project.id, to: Int64(counter)) else {
            throw Self.refused(.wrongCounter)
        }
    }

    /// Uses up a challenge, or refuses one that was never issued in the project, was used, or expired.
    private func consume(_ challenge: String, in project: Project, now: Date) async throws {
        guard (1...128).contains(challenge.utf8.count),
            try await store.consumeChallenge(hash: SecretHash.hex(challenge), projectId: project.id, now: now)
        else {
            throw AppVerificationService.required("The App Attest challenge is unknown, used or expired.")
        }
    }

    private static func appId(of project: Project) throws -> String {
        guard let appId = project.settings.appAttestAppId else {
            throw VerityError(.forbidden, "App Attest is off for this project.")
        }
        return appId
    }

    private static func refused(_ failure: AppAttestVerifier.Failure) -> VerityError {
        AppVerificationService.required(failure.description)
    }
}
