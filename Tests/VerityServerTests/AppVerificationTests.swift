import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("App verification before sending codes")
struct AppVerificationTests {
    static let pushToken = "a1b2c3d4e5f60718"

    /// A node whose project requires app verification.
    static func requiringNode(_ engine: TestEngine) async throws -> TestNode {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
            $0.requiresAppVerification = true
        }
        return node
    }

    @Test(
        "A project that requires it sends a sign-in code only with the secret its silent push carried",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        let node = try await Self.requiringNode(engine)
        let project = try await node.verity.admin.project(id: node.project.id)
        try await node.run { client in
            let refused = try await client.auth(
                .post, "otp/start", project: project, json: #"{"loginId":"ada@example.com"}"#)
            #expect(refused.status == .forbidden)
            #expect(try refused.problem().code == "app_verification_required")

            let proof = try await Self.verifyApp(node: node, client: client, project: project)
            let (id, secret) = (proof.id, proof.secret)
            for bad in [
                "\(id).\(secret.dropLast())x", "\(id)", "apv_1_x.\(secret)", String(repeating: "a", count: 300),
            ] {
                let wrong = try await Self.start("bob@example.com", proof: bad, client: client, project: project)
                #expect(try wrong.problem().code == "app_verification_required", "\(bad.prefix(20))")
            }
            #expect(node.sender.messages().isEmpty)

            let accepted = try await Self.start(
                "ada@example.com", proof: "\(id).\(secret)", client: client, project: project)
            #expect(accepted.status == .ok)
            try await node.sender.waitForMessages(to: "ada@example.com")
        }
    }

    @Test("A proof works for one project, for an hour and for ten sends", arguments: TestEngine.available)
    func proofLimits(engine: TestEngine) async throws {
        let node = try await Self.requiringNode(engine)
        let project = try await node.verity.admin.project(id: node.project.id)
        let (other, _) = try await node.otherProject()
        _ = try await node.verity.admin.updateProject(id: other.id, name: nil) { $0.requiresAppVerification = true }
        let otherProject = try await node.verity.admin.project(id: other.id)
        try await node.run { client in
            let proof = try await Self.verifyApp(node: node, client: client, project: project)
            let header = "\(proof.id).\(proof.secret)"
            let elsewhere = try await Self.start(
                "ada@example.com", proof: header, client: client, project: otherProject)
            #expect(try elsewhere.problem().code == "app_verification_required")

            for index in 0..<AppVerificationService.maxSends {
                let sent = try await Self.start(
                    "user\(index)@example.com", proof: header, client: client, project: project)
                #expect(sent.status == .ok)
            }
            let usedUp = try await Self.start("late@example.com", proof: header, client: client, project: project)
            #expect(try usedUp.problem().code == "app_verification_required")

            let fresh = try await Self.verifyApp(node: node, client: client, project: project, count: 2)
            node.clock.advance(by: AppVerificationService.lifetime + 1)
            let expired = try await Self.start(
                "late@example.com", proof: "\(fresh.id).\(fresh.secret)", client: client, project: project)
            #expect(try expired.problem().code == "app_verification_required")
        }
    }

    @Test(
        "Step-up codes and possession codes need the proof too; a test number and other step-ups do not",
        arguments: TestEngine.available)
    func otherSends(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.testNumbers.add(
            CreateTestPhoneNumberRequest(phoneNumber: "+15005550100", code: "424242"), in: node.project)
        try await node.run { client in
            // Signed in before the project began to require it, with both an email and a phone number.
            let signedIn = try await client.signIn("ada@example.com", node: node)
            _ = try await node.verity.users.update(
                id: signedIn.user.id, UpdateUserRequest(loginIds: ["ada@example.com", "+14155550100"]),
                in: node.project)
            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
                $0.requiresAppVerification = true
            }
            let project = try await node.verity.admin.project(id: node.project.id)

            let stepUp = try await client.auth(
                .post, "stepup/start", project: project, json: #"{"method":"otp"}"#, session: signedIn.sessionJwt)
            #expect(try stepUp.problem().code == "app_verification_required")
            let testNumber = try await client.auth(
                .post, "otp/start", project: project, json: #"{"loginId":"+15005550100"}"#)
            #expect(testNumber.status == .ok)

            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550123","flow":"mobile"}"#, node: node, client: client)
            let unproven = try await flow.step("otp/start", client: client)
            #expect(try unproven.problem().code == "app_verification_required")
            let proof = try await Self.verifyApp(node: node, client: client, project: project)
            var headers = HTTPFields()
            headers[try #require(HTTPField.Name(AuthHeaders.appVerification))] = "\(proof.id).\(proof.secret)"
            let proven = try await client.send(
                .post, "/v1/possession/\(flow.started.correlationId)/otp/start", key: flow.started.authToken,
                headers: headers)
            #expect(proven.status == .ok)
            try await node.sender.waitForMessages(to: "+14155550123")
        }
    }

    @Test("Asking for app verification is checked and limited per client address", arguments: TestEngine.available)
    func startIsChecked(engine: TestEngine) async throws {
        let node = try await Self.requiringNode(engine)
        try await node.run { client in
            for bad in [
                #"{"pushPlatform":"none","pushToken":"a1"}"#, #"{"pushPlatform":"apns","pushToken":""}"#,
                #"{"pushPlatform":"fcm"}"#,
            ] {
                let refused = try await client.auth(.post, "app-verification", project: node.project, json: bad)
                #expect(refused.status == .badRequest, "\(bad)")
            }
            let body = #"{"pushPlatform":"fcm","pushToken":"\#(Self.pushToken)"}"#
            for _ in 0..<AppVerificationService.perClientAddress.capacity {
                let started = try await client.auth(.post, "app-verification", project: node.project, json: body)
                #expect(started.status == .accepted)
            }
            let limited = try await client.auth(.post, "app-verification", project: node.project, json: body)
            #expect(try limited.problem().code == "rate_limited")
        }
    }

    // MARK: - Helpers

    /// Asks for app verification, waits for the silent push (the `count`th), and returns its id and secret.
    static func verifyApp(node: TestNode, client: some TestClientProtocol, project: Project, count: Int = 1)
        async throws -> (id: String, secret: String)
    {
        let started = try await client.auth(
            .post, "app-verification", project: project,
            json: #"{"pushPlatform":"apns","pushToken":"\#(pushToken)","appId":"com.example.app"}"#)
        #expect(started.status == .accepted)
        let id = try started.decode(AppVerificationStarted.self).id
        let push = try await node.sender.waitForPush(count: count)
        #expect(push.isSilent)
        #expect(push.token == pushToken)
        #expect(push.appId == "com.example.app")
        let data = try #require(push.silentData)
        #expect(data["type"] == AppVerificationPush.type)
        #expect(data[AppVerificationPush.idKey] == id)
        let secret = try #require(data[AppVerificationPush.secretKey])
        LeakWatch.secret(secret)
        // The outbox keeps the id, never the secret.
        let stored = try await node.verity.outbox.messages(destination: id)
        #expect(stored.count == 1)
        #expect(stored.first?.message.payload?.contains(secret) == false)
        return (id, secret)
    }

    static func start(_ loginId: String, proof: String, client: some TestClientProtocol, project: Project)
        async throws -> TestResponse
    {
        var headers = HTTPFields()
        headers[try #require(HTTPField.Name(AuthHeaders.project))] = project.id
        headers[try #require(HTTPField.Name(AuthHeaders.appVerification))] = proof
        return try await client.send(
            .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"\#(loginId)"}"#, headers: headers)
    }
}

extension RecordingSender {
    /// Waits until `count` pushes were sent and returns the last.
    func waitForPush(count: Int = 1, timeout: Duration = .seconds(10)) async throws -> PushNotification {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if pushes.count >= count { return pushes[count - 1] }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("Expected \(count) push(es), got \(pushes.count)")
        throw CancellationError()
    }
}
