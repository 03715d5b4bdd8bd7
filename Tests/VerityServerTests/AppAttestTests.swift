import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import SwiftASN1
import Testing
import VerityCore
import VerityTestSupport
import X509

@testable import VerityServer

@Suite("App Attest as a proof of the app")
struct AppAttestTests {
    static let appId = "ABCDE12345.com.example.app"

    /// A node whose project requires app verification and accepts App Attest keys of `environment`, trusting the
    /// device's test root in place of Apple's.
    static func node(
        _ engine: TestEngine, environment: AppAttestEnvironment = .production, trustTestRoot: Bool = true
    ) async throws -> (TestNode, AppAttestTestDevice, Project) {
        let clock = TestClock()
        let device = try AppAttestTestDevice(now: clock.now())
        let node = try await TestNode.make(
            engine, clock: clock,
            dependencies: { if trustTestRoot { $0.appAttestRoots = [device.root] } })
        let project = try await enable(node.project.id, environment: environment, node: node)
        return (node, device, project)
    }

    static func enable(_ projectId: String, environment: AppAttestEnvironment = .production, node: TestNode)
        async throws -> Project
    {
        let change = try ProjectSettingsChange([
            .requiresAppVerification: "required", .appAttest: "on", .appAttestTeamId: "ABCDE12345",
            .appAttestBundleId: "com.example.app", .appAttestEnvironment: environment.rawValue,
        ])
        _ = try await node.verity.admin.updateProject(id: projectId, name: nil) { change.apply(to: &$0) }
        return try await node.verity.admin.project(id: projectId)
    }

    @Test(
        "An attested key's assertion proves the app for one send to the address it names; replays and stale counters fail",
        arguments: TestEngine.available)
    func assertions(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine)
        try await node.run { client in
            try await Self.attest(device, client: client, project: project)
            let first = try await Self.proof(
                device, counter: 1, client: client, project: project)
            let sent = try await AppVerificationTests.start(
                "ada@example.com", proof: first, client: client, project: project)
            #expect(sent.status == .ok)
            try await node.sender.waitForMessages(to: "ada@example.com")

            // The same proof again: its challenge is used.
            let replayed = try await AppVerificationTests.start(
                "ada@example.com", proof: first, client: client, project: project)
            try Self.expectRefused(replayed, "The App Attest challenge is unknown, used or expired.")
            // A fresh challenge but the counter already seen, or a lower one.
            for counter: UInt32 in [1, 0] {
                let refused = try await Self.signIn(
                    "ada@example.com", device: device, counter: counter, client: client, project: project)
                try Self.expectRefused(refused, AppAttestVerifier.Failure.wrongCounter.description)
            }
            // A challenge older than its five minutes.
            let old = try await Self.proof(
                device, counter: 4, client: client, project: project)
            node.clock.advance(by: AppAttestService.challengeLifetime)
            let expired = try await AppVerificationTests.start(
                "ada@example.com", proof: old, client: client, project: project)
            try Self.expectRefused(expired, "The App Attest challenge is unknown, used or expired.")
            // A challenge never issued.
            let clientData = AppAttestProof.clientData(challenge: "NOTISSUED")
            let unissued = AppAttestProof.header(
                keyId: device.keyId, challenge: "NOTISSUED",
                assertion: try device.assertion(clientData: clientData, appId: Self.appId, counter: 9))
            let refused = try await AppVerificationTests.start(
                "ada@example.com", proof: unissued, client: client, project: project)
            try Self.expectRefused(refused, "The App Attest challenge is unknown, used or expired.")
            // Signed by another key.
            let challenge = try await Self.challenge(client: client, project: project)
            let forged = AppAttestProof.header(
                keyId: device.keyId, challenge: challenge,
                assertion: try device.assertion(
                    clientData: AppAttestProof.clientData(challenge: challenge),
                    appId: Self.appId, counter: 10, signer: P256.Signing.PrivateKey()))
            let unsigned = try await AppVerificationTests.start(
                "ada@example.com", proof: forged, client: client, project: project)
            try Self.expectRefused(unsigned, AppAttestVerifier.Failure.badSignature.description)
            #expect(node.sender.messages(to: "bob@example.com").isEmpty)
            #expect(node.sender.messages(to: "ada@example.com").count == 1)

            let again = try await Self.signIn(
                "ada@example.com", device: device, counter: 2, client: client, project: project)
            #expect(again.status == .ok)
        }
    }

    @Test("Two assertions with one counter at once: one sends, the other is refused", arguments: TestEngine.available)
    func concurrentCounter(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine)
        try await node.run { client in
            try await Self.attest(device, client: client, project: project)
            let proofs = [
                try await Self.proof(device, counter: 7, client: client, project: project),
                try await Self.proof(device, counter: 7, client: client, project: project),
            ]
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for proof in proofs {
                    group.addTask {
                        try await AppVerificationTests.start(
                            "ada@example.com", proof: proof, client: client, project: project
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted { $0.code < $1.code } == [.ok, .forbidden])
        }
    }

    @Test(
        "An attestation with a wrong nonce, app, environment, counter, key id, root or challenge is refused, nothing kept",
        arguments: TestEngine.available)
    func refusedAttestations(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine)
        try await node.run { client in
            // Each case bends one field of an otherwise good attestation and must be refused by its own check.
            let cases: [(AppAttestVerifier.Failure, Bend)] = [
                (.wrongNonce, Bend(nonceChallenge: "other")),
                (.wrongApp, Bend(appId: "ABCDE12345.com.example.other")),
                (.wrongEnvironment, Bend(environment: .development)),
                (.wrongCounter, Bend(counter: 1)),
                (.wrongKeyId, Bend(keyId: Data(repeating: 1, count: 32).base64EncodedString())),
                (.untrustedChain, Bend(issuer: P256.Signing.PrivateKey())),
            ]
            for (failure, bend) in cases {
                let challenge = try await Self.challenge(client: client, project: project)
                let object = try device.attestation(
                    challenge: challenge, appId: bend.appId, environment: bend.environment,
                    nonceChallenge: bend.nonceChallenge, counter: bend.counter, issuer: bend.issuer)
                let refused = try await Self.register(
                    bend.keyId ?? device.keyId, object, challenge: challenge, client: client, project: project)
                try Self.expectRefused(refused, failure.description)
            }
            let good = try device.attestation(challenge: "NOTISSUED", appId: Self.appId, environment: .production)
            let unissued = try await Self.register(
                device.keyId, good, challenge: "NOTISSUED", client: client, project: project)
            try Self.expectRefused(unissued, "The App Attest challenge is unknown, used or expired.")
            // The first good attestation's challenge was used by the refusal above, so it cannot be tried again.
            let challenge = try await Self.challenge(client: client, project: project)
            let wrong = try device.attestation(challenge: challenge, appId: Self.appId, environment: .development)
            _ = try await Self.register(device.keyId, wrong, challenge: challenge, client: client, project: project)
            let retried = try await Self.register(
                device.keyId, try device.attestation(challenge: challenge, appId: Self.appId, environment: .production),
                challenge: challenge, client: client, project: project)
            try Self.expectRefused(retried, "The App Attest challenge is unknown, used or expired.")
            #expect(try await Self.storedKey(device, node: node, project: project) == nil)
        }
    }

    @Test("A development project takes development keys", arguments: TestEngine.available)
    func developmentKeys(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine, environment: .development)
        try await node.run { client in
            try await Self.attest(device, environment: .development, client: client, project: project)
            let sent = try await Self.signIn(
                "ada@example.com", device: device, counter: 1, client: client, project: project)
            #expect(sent.status == .ok)
        }
    }

    @Test("A key attested in one project proves nothing in another", arguments: TestEngine.available)
    func otherProject(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine)
        let (other, _) = try await node.otherProject()
        let otherProject = try await Self.enable(other.id, node: node)
        try await node.run { client in
            try await Self.attest(device, client: client, project: project)
            let refused = try await Self.signIn(
                "ada@example.com", device: device, counter: 1, client: client, project: otherProject)
            try Self.expectRefused(refused, "This App Attest key is not attested in this project.")
            // Nor does a challenge of one project serve in the other.
            let elsewhere = try await Self.proof(
                device, counter: 2, client: client, project: otherProject)
            let crossed = try await AppVerificationTests.start(
                "ada@example.com", proof: elsewhere, client: client, project: project)
            try Self.expectRefused(crossed, "The App Attest challenge is unknown, used or expired.")
            #expect(node.sender.messages(to: "ada@example.com").isEmpty)
        }
    }

    @Test("Production pins Apple's App Attestation Root CA: a test root's attestation is refused")
    func pinnedRoot() async throws {
        let root = try AppleAppAttestationRoot.certificate()
        var serializer = DER.Serializer()
        try serializer.serialize(root)
        #expect(
            Hex.encode(SHA256.hash(data: serializer.serializedBytes))
                == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        let (node, device, project) = try await Self.node(.sqlite, trustTestRoot: false)
        try await node.run { client in
            let challenge = try await Self.challenge(client: client, project: project)
            let refused = try await Self.register(
                device.keyId,
                try device.attestation(challenge: challenge, appId: Self.appId, environment: .production),
                challenge: challenge, client: client, project: project)
            try Self.expectRefused(refused, AppAttestVerifier.Failure.untrustedChain.description)
        }
    }

    @Test(
        "Possession codes and the Firebase face take an assertion too (Firebase in its App Check header)",
        arguments: TestEngine.available)
    func otherFaces(engine: TestEngine) async throws {
        let (node, device, project) = try await Self.node(engine)
        let link = try await FirebaseFaceTests.named(node)
        try await node.run { client in
            try await Self.attest(device, client: client, project: project)
            let phone = "+14155550123"
            let missing = try await client.firebase(
                "\(FirebaseFaceTests.v1)/accounts:sendVerificationCode", key: link.apiKey,
                json: #"{"phoneNumber":"\#(phone)"}"#)
            #expect(try missing.googleError() == "MISSING_APP_CREDENTIAL")
            var appCheck = HTTPFields()
            appCheck[try #require(HTTPField.Name("X-Firebase-AppCheck"))] = try await Self.proof(
                device, counter: 1, client: client, project: project)
            let sent = try await client.firebase(
                "\(FirebaseFaceTests.v1)/accounts:sendVerificationCode", key: link.apiKey,
                json: #"{"phoneNumber":"\#(phone)"}"#, headers: appCheck)
            #expect(sent.status == .ok)
            try await node.sender.waitForMessages(to: phone)

            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550124","flow":"mobile"}"#, node: node, client: client)
            var headers = HTTPFields()
            headers[try #require(HTTPField.Name(AuthHeaders.appVerification))] = try await Self.proof(
                device, counter: 2, client: client, project: project)
            let proven = try await client.send(
                .post, "/v1/possession/\(flow.started.correlationId)/otp/start", key: flow.started.authToken,
                headers: headers)
            #expect(proven.status == .ok)
            try await node.sender.waitForMessages(to: "+14155550124")
        }
    }

    @Test("App Attest needs a team id and a bundle id, and refuses malformed ones")
    func settings() throws {
        var settings = ProjectSettings()
        try ProjectSettingsChange([.appAttest: "on"]).apply(to: &settings)
        #expect(throws: ConfigurationError.self) { try settings.validated() }
        try ProjectSettingsChange([.appAttestTeamId: "abc", .appAttestBundleId: "com.example.app"]).apply(to: &settings)
        #expect(throws: ConfigurationError.self) { try settings.validated() }
        try ProjectSettingsChange([.appAttestTeamId: "ABCDE12345"]).apply(to: &settings)
        #expect(try settings.validated().appAttestAppId == Self.appId)
        #expect(throws: ConfigurationError.self) { try ProjectSettingsChange([.appAttestEnvironment: "staging"]) }
    }

    // MARK: - Helpers

    /// One field of an attestation bent away from what Apple would issue.
    struct Bend {
        var appId = AppAttestTests.appId
        var environment = AppAttestEnvironment.production
        var nonceChallenge: String? = nil
        var counter: UInt32 = 0
        var keyId: String? = nil
        var issuer: P256.Signing.PrivateKey? = nil
    }

    static func challenge(client: some TestClientProtocol, project: Project) async throws -> String {
        let response = try await client.auth(.post, "app-attest/challenges", project: project)
        #expect(response.status == .created)
        return try response.decode(AppAttestChallenge.self).challenge
    }

    static func register(
        _ keyId: String, _ object: String, challenge: String, client: some TestClientProtocol, project: Project
    ) async throws -> TestResponse {
        let body = try JSONEncoder().encode(
            AppAttestKeyRequest(keyId: keyId, attestationObject: object, challenge: challenge))
        return try await client.auth(
            .post, "app-attest/keys", project: project, json: String(decoding: body, as: UTF8.self))
    }

    static func attest(
        _ device: AppAttestTestDevice, environment: AppAttestEnvironment = .production,
        client: some TestClientProtocol, project: Project
    ) async throws {
        let challenge = try await challenge(client: client, project: project)
        let registered = try await register(
            device.keyId, try device.attestation(challenge: challenge, appId: appId, environment: environment),
            challenge: challenge, client: client, project: project)
        #expect(registered.status == .created)
        #expect(try registered.decode(AppAttestKeyRegistered.self).keyId == device.keyId)
    }

    /// Asks for a sign-in code to `loginId` with a fresh assertion by `device` with `counter`.
    static func signIn(
        _ loginId: String, device: AppAttestTestDevice, counter: UInt32, client: some TestClientProtocol,
        project: Project
    ) async throws -> TestResponse {
        let proof = try await proof(device, counter: counter, client: client, project: project)
        return try await AppVerificationTests.start(loginId, proof: proof, client: client, project: project)
    }

    /// Expects `403 app_verification_required` saying `detail`: refused by that one check.
    static func expectRefused(
        _ response: TestResponse, _ detail: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        guard response.status == .forbidden else {
            Issue.record("Expected 403 (\(detail)), got \(response.status)", sourceLocation: sourceLocation)
            return
        }
        let problem = try response.problem()
        #expect(problem.code == "app_verification_required", sourceLocation: sourceLocation)
        #expect(problem.detail == detail, sourceLocation: sourceLocation)
    }

    /// The header value of a fresh assertion, good for one send.
    static func proof(
        _ device: AppAttestTestDevice, counter: UInt32, client: some TestClientProtocol,
        project: Project
    ) async throws -> String {
        let challenge = try await challenge(client: client, project: project)
        let clientData = AppAttestProof.clientData(challenge: challenge)
        return AppAttestProof.header(
            keyId: device.keyId, challenge: challenge,
            assertion: try device.assertion(clientData: clientData, appId: appId, counter: counter))
    }

    static func storedKey(_ device: AppAttestTestDevice, node: TestNode, project: Project) async throws
        -> AppAttestStore.StoredKey?
    {
        try await AppAttestStore(database: node.verity.database).key(keyId: device.keyId, projectId: project.id)
    }
}
