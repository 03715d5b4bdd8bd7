import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import SQLKit
import Testing
import VerityCore

@testable import VerityServer

/// What someone with a copy of the database reads: webhook signing secrets and test numbers' codes are sealed, and
/// everything that uses them still works, also on a database written before they were sealed.
@Suite("Secrets at rest")
struct SecretsAtRestTests {
    static let testNumber = "+16505550142"
    static let fixedCode = "492817"

    @Test(
        "The webhook signing secret is sealed in the database and still signs the events",
        arguments: TestEngine.available)
    func webhookSecret(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let secrets = NIOLockedValueBox<String?>(nil)
        let requests = try await withStandIn(answer: StandInAnswer(status: .ok, body: "")) { baseURL, _ in
            let project = try await node.verity.admin.setWebhook(projectId: node.project.id, url: baseURL + "/hooks")
            let secret = try #require(project.webhookSecret)
            secrets.withLockedValue { $0 = secret }
            let stored = try #require(try await Self.storedWebhookSecret(node))
            #expect(!stored.contains(secret))
            #expect(!stored.contains(String(secret.dropFirst("whsec_".count))))
            #expect(try await node.verity.admin.project(id: node.project.id).webhookSecret == secret)
            try await Self.answerOneChallenge(node)
        }
        let request = try #require(requests.first)
        let secret = try #require(secrets.withLockedValue { $0 })
        let signature = try #require(request.headers["verity-signature"] ?? request.headers["Verity-Signature"])
        #expect(WebhookSignature.verify(header: signature, secret: secret, body: request.body, now: Date()))
    }

    @Test("A test number's code is sealed in the database and still signs in", arguments: TestEngine.available)
    func testNumberCode(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let added = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey,
                json: #"{"phoneNumber":"\#(Self.testNumber)","code":"\#(Self.fixedCode)"}"#)
            #expect(added.status == .created || added.status == .ok)
            let stored = try #require(try await Self.storedCode(node))
            #expect(!stored.contains(Self.fixedCode))
            let listed = try await client.send(.get, "/v1/test-numbers", key: node.apiKey)
            #expect(String(buffer: listed.body).contains(Self.fixedCode))
            try await Self.expectSignIn(node, client: client)
        }
    }

    @Test(
        "Secrets an older version stored in plain text are sealed at start-up and keep working",
        arguments: TestEngine.available)
    func upgradedDatabase(engine: TestEngine) async throws {
        let old = try await TestNode.make(engine, location: engine.persistentLocation())
        let secret = "whsec_" + String(repeating: "k", count: 43)
        try await old.verity.database.execute { sql in
            try await sql.raw(
                """
                UPDATE projects SET webhook_url = 'https://hooks.example/verity', webhook_secret = \(bind: secret)
                WHERE id = \(bind: old.project.id)
                """
            ).run()
            try await sql.raw(
                """
                INSERT INTO test_numbers (project_id, phone, code, created_at)
                VALUES (\(bind: old.project.id), \(bind: Self.testNumber), \(bind: Self.fixedCode), 0)
                """
            ).run()
        }
        try await old.verity.database.close()

        let node = try await old.reopened()
        let stored = try #require(try await Self.storedWebhookSecret(node))
        #expect(!stored.contains(secret.dropFirst("whsec_".count)))
        #expect(try await node.verity.admin.project(id: node.project.id).webhookSecret == secret)
        #expect(try #require(try await Self.storedCode(node)) != Self.fixedCode)
        try await node.run { client in
            try await Self.expectSignIn(node, client: client)
        }
    }

    // MARK: - Helpers

    static func storedWebhookSecret(_ node: TestNode) async throws -> String? {
        try await node.verity.database.execute { sql in
            try await sql.raw("SELECT webhook_secret FROM projects WHERE id = \(bind: node.project.id)")
                .first(decodingColumn: "webhook_secret", as: String?.self) ?? nil
        }
    }

    static func storedCode(_ node: TestNode) async throws -> String? {
        try await node.verity.database.execute { sql in
            try await sql.raw("SELECT code FROM test_numbers WHERE phone = \(bind: testNumber)")
                .first(decodingColumn: "code", as: String.self)
        }
    }

    /// The test number signs in with its fixed code, and nothing is sent to it.
    static func expectSignIn(_ node: TestNode, client: some TestClientProtocol) async throws {
        let started = try await client.auth(
            .post, "otp/start", project: node.project, json: #"{"loginId":"\#(testNumber)"}"#)
        #expect(started.status == .ok)
        let verified = try await client.auth(
            .post, "otp/verify", project: node.project,
            json: #"{"loginId":"\#(testNumber)","code":"\#(fixedCode)"}"#)
        #expect(verified.status == .ok)
        #expect(node.sender.messages(to: testNumber).isEmpty)
    }

    /// A push challenge answered, and its webhook event delivered.
    static func answerOneChallenge(_ node: TestNode) async throws {
        try await node.run { client in
            try await node.approveOneChallenge(client: client)
            try await node.webhookDelivered()
        }
    }
}
