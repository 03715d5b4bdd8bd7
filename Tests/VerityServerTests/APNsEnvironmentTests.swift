import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// The APNs environment a device reports at enrollment (a development build's tokens are sandbox tokens): kept with
/// the factor, and honoured when the server pushes to it.
@Suite("APNs environment per factor")
struct APNsEnvironmentTests {
    @Test(
        "a factor's environment is stored and goes with its pushes; without one the server's applies",
        arguments: TestEngine.available)
    func perFactor(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var sandbox = TestDevice(clock: node.clock)
            let token = try await sandbox.enrollmentToken(userId: "user-1", node: node, client: client)
            let body = CreatePushFactorRequest(
                publicKey: sandbox.key.publicKey.derBase64, friendlyName: "Debug build", pushPlatform: .apns,
                pushToken: "a1b2c3d4", appId: "com.example.app", apnsEnvironment: .sandbox)
            let enrolled = try await client.send(
                .post, "/v1/device/factors", key: token, json: try TestDevice.json(body))
            #expect(enrolled.status == .created)
            let answer = try enrolled.decode(EnrolledPushFactor.self)
            sandbox.factorId = answer.factor.id
            #expect(try await sandbox.verify(token: token, nonce: answer.nonce, client: client).status == .ok)
            let production = try await TestDevice.enrolled(node: node, client: client)

            _ = try await client.createChallenge(#"{"userId":"user-1"}"#, key: node.apiKey)
            try await waitUntil { node.sender.pushes.count == 2 }
            let pushes = Dictionary(uniqueKeysWithValues: node.sender.pushes.map { ($0.factorId, $0) })
            #expect(pushes[sandbox.factorId]?.apnsEnvironment == .sandbox)
            #expect(pushes[production.factorId]?.apnsEnvironment == nil)
        }
    }

    @Test(
        "an environment that is not production or sandbox is refused with 400 invalid_request",
        arguments: TestEngine.available)
    func refused(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = TestDevice(clock: node.clock)
            let token = try await device.enrollmentToken(userId: "user-1", node: node, client: client)
            let key = device.key.publicKey.derBase64
            let response = try await client.send(
                .post, "/v1/device/factors", key: token,
                json:
                    #"{"publicKey":"\#(key)","friendlyName":"Phone","pushPlatform":"apns","pushToken":"a1b2","apnsEnvironment":"staging"}"#
            )
            #expect(response.status == .badRequest)
            #expect(try response.problem().code == ErrorCode.invalidRequest.rawValue)
            let factors = try await client.send(.get, "/v1/users/user-1/factors", key: node.apiKey)
            #expect(try factors.decode(Page<Factor>.self).items.isEmpty)
        }
    }

    @Test("the sender goes to the device's environment, unless a base URL overrides both")
    func origin() {
        var configuration = APNsConfiguration(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: "", topic: "com.example.app",
            environment: .production)
        #expect(configuration.resolvedBaseURL(for: .sandbox) == "https://api.sandbox.push.apple.com")
        #expect(configuration.resolvedBaseURL(for: .production) == "https://api.push.apple.com")
        #expect(configuration.resolvedBaseURL(for: nil) == "https://api.push.apple.com")
        configuration.baseURL = "https://127.0.0.1:9443/"
        #expect(configuration.resolvedBaseURL(for: .sandbox) == "https://127.0.0.1:9443")
    }
}
