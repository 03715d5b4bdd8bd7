import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit

/// An ``AppAttestService`` that makes numbered keys, answers with bytes that name the key and hash, fails where told,
/// and records what it was asked.
// @unchecked Sendable: every property is only touched while holding `lock`.
final class ScriptedAppAttestService: AppAttestService, @unchecked Sendable {
    private let lock = NSLock()
    private let supported: Bool
    private var keys = 0
    private var failures: [String: AppAttestError]
    private var calls: [String] = []

    /// - Parameter failures: The error each call (`generateKey`, `attestKey`, `generateAssertion`) throws, once.
    init(isSupported: Bool = true, failures: [String: AppAttestError] = [:]) {
        supported = isSupported
        self.failures = failures
    }

    var isSupported: Bool { supported }
    /// Each call, as `generateKey`, `attestKey <key> <hash>` or `generateAssertion <key> <hash>`, the hash in hex.
    var recorded: [String] { lock.withLock { calls } }

    func generateKey() async throws -> String {
        try lock.withLock {
            try record("generateKey")
            keys += 1
            return Data("key-\(keys)".utf8).base64EncodedString()
        }
    }

    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try lock.withLock {
            try record("attestKey", keyId, clientDataHash)
            return Data("attestation of \(keyId)".utf8)
        }
    }

    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try lock.withLock {
            try record("generateAssertion", keyId, clientDataHash)
            return Data("assertion by \(keyId) over \(Self.hex(clientDataHash))".utf8)
        }
    }

    private func record(_ call: String, _ keyId: String? = nil, _ hash: Data? = nil) throws {
        calls.append(([call] + [keyId, hash.map(Self.hex)].compactMap { $0 }).joined(separator: " "))
        if let failure = failures.removeValue(forKey: call) { throw failure }
    }

    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    /// The SHA-256 of a challenge, in hex, as a new key's client data hash is.
    static func hash(_ challenge: String) -> String {
        hex(Data(SHA256.hash(data: Data(challenge.utf8))))
    }

    /// The SHA-256 of an assertion's client data over `challenge`, in hex.
    static func assertionHash(_ challenge: String) -> String {
        hex(Data(SHA256.hash(data: AppAttestProof.clientData(challenge: challenge))))
    }

    static func keyId(_ number: Int) -> String {
        Data("key-\(number)".utf8).base64EncodedString()
    }
}

@Suite("Proving the app with App Attest, falling back to the silent push")
struct AppAttestTests {
    /// A session whose app verification tries App Attest first.
    struct Setup {
        let transport = RecordingTransport()
        let service: ScriptedAppAttestService
        let store: InMemorySecureStore
        let marker: TestInstallationMarker
        let appVerification: VerityAppVerification
        let verity: VeritySession

        init(
            service: ScriptedAppAttestService = ScriptedAppAttestService(),
            store: InMemorySecureStore = InMemorySecureStore(),
            marker: TestInstallationMarker = TestInstallationMarker(present: false)
        ) throws {
            (self.service, self.store, self.marker) = (service, store, marker)
            let configuration = VerityConfiguration(baseURL: try Fixture.baseURL(), appId: "com.example.app")
            appVerification = VerityAppVerification(
                configuration: configuration, projectId: SessionFixture.projectId, transport: transport,
                timeout: .seconds(60),
                appAttest: AppAttestOptions(service: service, store: store, installationMarker: marker))
            verity = VeritySession(
                configuration: configuration, projectId: SessionFixture.projectId, transport: transport,
                store: InMemorySecureStore(), appVerification: appVerification)
        }

        func enqueueChallenge(_ challenge: String) async throws {
            await transport.enqueue(
                try Fixture.json(["challenge": challenge, "expiresAt": "2030-01-01T00:00:00Z"], status: 201))
        }

        /// Scripts a key's attestation over `challenge` (accepted), then an assertion's challenge.
        func enqueueAttestation(challenge: String, thenAssertion assertionChallenge: String) async throws {
            try await enqueueChallenge(challenge)
            await transport.enqueue(TransportResponse(status: 201))
            try await enqueueChallenge(assertionChallenge)
        }

        func enqueueRefusal() async throws {
            await transport.enqueue(try Fixture.problem(.appVerificationRequired))
        }

        func enqueueOTPStarted() async throws {
            await transport.enqueue(try Fixture.json(SessionFixture.otpStarted()))
        }

        /// Scripts the proof by silent push (the server starts an app verification), then the code sent.
        func enqueueSilentPushThenOTP() async throws {
            let started = AppVerificationStarted(
                id: AppVerificationTests.proofId, expiresAt: Fixture.now.addingTimeInterval(60))
            await transport.enqueue(try Fixture.json(started, status: 202))
            try await enqueueOTPStarted()
        }

        /// Starts a code, delivers the silent push once the session asked for one, and waits for the code.
        func startOTPDeliveringPush() async throws {
            let verity = verity
            let started = Task { try await verity.startOTP(loginId: SessionFixture.phoneNumber) }
            try await eventually { await paths.last == "/v1/auth/app-verification" }
            #expect(appVerification.receiveNotification(AppVerificationTests.silentPush))
            _ = try await started.value
        }

        /// The paths of the requests sent, in order.
        var paths: [String] {
            get async { await transport.requests.map(\.url.path) }
        }

        /// The proof header of the last request.
        var lastProof: String? {
            get async { await transport.requests.last?.value(forHeader: AuthHeaders.appVerification) }
        }

        var storedKeyId: String? {
            (try? store.data(forKey: "verity.app-attest.\(SessionFixture.projectId)")).flatMap {
                $0.map { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    /// The proof an assertion by key `number` over `challenge` makes.
    static func proof(key number: Int, challenge: String) -> String {
        let keyId = ScriptedAppAttestService.keyId(number)
        let assertion = Data("assertion by \(keyId) over \(ScriptedAppAttestService.assertionHash(challenge))".utf8)
        return AppAttestProof.header(keyId: keyId, challenge: challenge, assertion: assertion)
    }

    static let otpStart = "/v1/auth/otp/start"
    static let challenges = "/v1/auth/app-attest/challenges"
    static let keys = "/v1/auth/app-attest/keys"

    @Test("refused for want of a proof, a supported device attests a key once, then asserts per request")
    func attestsOnceThenAsserts() async throws {
        let setup = try Setup()
        try await setup.enqueueRefusal()
        try await setup.enqueueAttestation(challenge: "c1", thenAssertion: "c2")
        try await setup.enqueueOTPStarted()
        _ = try await setup.verity.startOTP(loginId: SessionFixture.phoneNumber)

        #expect(await setup.paths == [Self.otpStart, Self.challenges, Self.keys, Self.challenges, Self.otpStart])
        #expect(await setup.lastProof == Self.proof(key: 1, challenge: "c2"))
        #expect(await setup.appVerification.lastMethod == .appAttest)
        let attestation = try decodeBody([String: String].self, of: try #require(await setup.transport.requests[2]))
        #expect(
            attestation == [
                "keyId": ScriptedAppAttestService.keyId(1), "challenge": "c1",
                "attestationObject": Data("attestation of \(ScriptedAppAttestService.keyId(1))".utf8)
                    .base64EncodedString(),
            ])
        #expect(setup.storedKeyId == ScriptedAppAttestService.keyId(1))

        // The next request carries a fresh assertion from the start; no key is made again.
        try await setup.enqueueChallenge("c3")
        try await setup.enqueueOTPStarted()
        _ = try await setup.verity.startOTP(loginId: SessionFixture.phoneNumber)
        #expect(await setup.lastProof == Self.proof(key: 1, challenge: "c3"))
        let key = ScriptedAppAttestService.keyId(1)
        #expect(
            setup.service.recorded == [
                "generateKey", "attestKey \(key) \(ScriptedAppAttestService.hash("c1"))",
                "generateAssertion \(key) \(ScriptedAppAttestService.assertionHash("c2"))",
                "generateAssertion \(key) \(ScriptedAppAttestService.assertionHash("c3"))",
            ])
    }

    @Test(
        "an unsupported device, a device failure or a project that does not take App Attest falls back to the push",
        arguments: [
            (ScriptedAppAttestService(isSupported: false), false),
            (ScriptedAppAttestService(failures: ["attestKey": .failed("DeviceCheck error 4")]), true),
            (ScriptedAppAttestService(failures: ["generateKey": .unsupported]), false),
        ])
    func fallsBackToSilentPush(service: ScriptedAppAttestService, asksForChallenge: Bool) async throws {
        let setup = try Setup(service: service)
        await setup.appVerification.setPushToken("a1b2c3d4", platform: .apns)
        try await setup.enqueueRefusal()
        if asksForChallenge { try await setup.enqueueChallenge("c1") }
        try await setup.enqueueSilentPushThenOTP()

        try await setup.startOTPDeliveringPush()

        #expect(await setup.lastProof == "\(AppVerificationTests.proofId).s3cret")
        #expect(await setup.appVerification.lastMethod == .silentPush)
        #expect(!(await setup.paths.contains(Self.keys)))
        #expect(setup.storedKeyId == nil)
    }

    @Test("the project refusing App Attest falls back to the push")
    func projectRefusesAppAttest() async throws {
        let setup = try Setup()
        await setup.appVerification.setPushToken("a1b2c3d4", platform: .apns)
        try await setup.enqueueRefusal()
        await setup.transport.enqueue(try Fixture.problem(.notFound))
        try await setup.enqueueSilentPushThenOTP()
        try await setup.startOTPDeliveringPush()
        #expect(await setup.appVerification.lastMethod == .silentPush)
        #expect(setup.service.recorded == ["generateKey"])
    }

    @Test("a key kept from before a reinstall is not used: the new installation attests its own")
    func reinstallAttestsAgain() async throws {
        let store = InMemorySecureStore()
        try store.set(Data("key-old".utf8), forKey: "verity.app-attest.\(SessionFixture.projectId)")
        let setup = try Setup(store: store, marker: TestInstallationMarker(present: false))
        // No assertion with the old key: the first request goes without a proof.
        try await setup.enqueueRefusal()
        try await setup.enqueueAttestation(challenge: "c1", thenAssertion: "c2")
        try await setup.enqueueOTPStarted()
        _ = try await setup.verity.startOTP(loginId: SessionFixture.phoneNumber)
        #expect(await setup.paths.first == Self.otpStart)
        #expect(await setup.lastProof == Self.proof(key: 1, challenge: "c2"))
        #expect(setup.storedKeyId == ScriptedAppAttestService.keyId(1))
        #expect(setup.marker.isPresent)

        // The same installation, started again, keeps its key.
        let restarted = try Setup(store: store, marker: setup.marker)
        try await restarted.enqueueChallenge("c3")
        try await restarted.enqueueOTPStarted()
        _ = try await restarted.verity.startOTP(loginId: SessionFixture.phoneNumber)
        #expect(await restarted.lastProof == Self.proof(key: 1, challenge: "c3"))
        #expect(restarted.service.recorded.allSatisfy { $0.hasPrefix("generateAssertion") })
    }

    @Test("a key the server refuses is attested again once; when the new one is refused too, the push takes over")
    func refusedKeyIsReplacedOnce() async throws {
        let store = InMemorySecureStore()
        try store.set(
            Data(ScriptedAppAttestService.keyId(9).utf8), forKey: "verity.app-attest.\(SessionFixture.projectId)")
        let setup = try Setup(store: store, marker: TestInstallationMarker(present: true))
        await setup.appVerification.setPushToken("a1b2c3d4", platform: .apns)
        try await setup.enqueueChallenge("c1")
        try await setup.enqueueRefusal()
        try await setup.enqueueAttestation(challenge: "c2", thenAssertion: "c3")
        try await setup.enqueueOTPStarted()
        _ = try await setup.verity.startOTP(loginId: SessionFixture.phoneNumber)
        let requests = await setup.transport.requests
        #expect(requests[1].value(forHeader: AuthHeaders.appVerification) == Self.proof(key: 9, challenge: "c1"))
        #expect(await setup.lastProof == Self.proof(key: 1, challenge: "c3"))
        #expect(setup.storedKeyId == ScriptedAppAttestService.keyId(1))

        // The new key is refused as well: no third key, the silent push proves the app.
        try await setup.enqueueChallenge("c4")
        try await setup.enqueueRefusal()
        try await setup.enqueueSilentPushThenOTP()
        try await setup.startOTPDeliveringPush()
        #expect(await setup.lastProof == "\(AppVerificationTests.proofId).s3cret")
        #expect(await setup.appVerification.lastMethod == .silentPush)
        #expect(setup.service.recorded.filter { $0 == "generateKey" }.count == 1)
        #expect(setup.storedKeyId == nil)
    }
}
