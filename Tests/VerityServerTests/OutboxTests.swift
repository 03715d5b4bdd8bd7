import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import SQLKit
import Testing
import VerityCore

@testable import VerityServer

@Suite("Outbox")
struct OutboxTests {
    let phone = "+14155550100"

    @Test("A failed send is retried with back-off and then delivered once", arguments: TestEngine.available)
    func retries(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        node.sender.failNext(DeliveryError(.transient, "busy 1"), DeliveryError(.transient, "busy 2"))
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            // First attempt fails at once; the retry waits for the back-off (2 s, then 4 s) on the test clock.
            try await waitUntil { try await node.verity.outbox.messages().first?.message.lastError == "busy 1" }
            #expect(node.sender.messages(to: phone).isEmpty)
            node.clock.advance(by: 2)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.lastError == "busy 2" }
            node.clock.advance(by: 4)
            try await node.sender.waitForMessages(to: phone)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .sent }
            let stored = try #require(try await node.verity.outbox.messages().first)
            #expect(stored.message.status == .sent)
            #expect(stored.message.attempts == 3)
            #expect(stored.message.sender == "recording")
            node.clock.advance(by: 3600)
            try await Task.sleep(for: .milliseconds(100))
            #expect(node.sender.messages(to: phone).count == 1)
        }
    }

    @Test("A permanent failure gives the message up at once", arguments: TestEngine.available)
    func permanentFailure(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        node.sender.failNext(DeliveryError(.permanent, "twilio 400 21211"))
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .dead }
            let stored = try #require(try await node.verity.outbox.messages().first)
            #expect(stored.message.lastError == "twilio 400 21211")
            #expect(stored.message.attempts == 1)
        }
    }

    @Test("After the last attempt a message is dead", arguments: TestEngine.available)
    func maxAttempts(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.outbox.maxAttempts = 2 }
        node.sender.failNext(DeliveryError(.transient, "down"), DeliveryError(.transient, "down"))
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.lastError == "down" }
            node.clock.advance(by: 2)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .dead }
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("A message committed before a crash is sent after the restart", arguments: TestEngine.available)
    func deliveredAfterRestart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, location: engine.persistentLocation())
        // Queue the message with no worker running, as if the process died right after the commit.
        let service = node.verity.verifications
        let started = try await service.start(.init(to: phone, channel: .sms), in: node.project)
        try await node.verity.database.close()

        let restarted = try await node.reopened()
        try await restarted.run { client in
            let code = try await restarted.sender.code(to: phone)
            let checked = try await client.check(id: started.id, code: code, key: restarted.apiKey)
            #expect(try checked.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test(
        "Claiming is exclusive: two workers never take the same message, with or without a per-project cap",
        arguments: TestEngine.available, [nil, 100])
    func exclusiveClaims(engine: TestEngine, perProject: Int?) async throws {
        let node = try await TestNode.make(engine)
        let service = node.verity.verifications
        for index in 0..<40 {
            _ = try await service.start(
                .init(to: "+1415555\(String(format: "%04d", index + 1000))", channel: .sms), in: node.project)
        }
        let now = node.clock.now()
        // The worker's claims, through the outbox service's seam for them.
        let outbox = node.verity.outbox
        func claim(_ limit: Int, at time: Date) async throws -> [OutboxMessage] {
            try await outbox.claimDue(
                channels: OutboxLane.messages.channels, limit: limit, perProject: perProject, lease: 60, now: time)
        }
        async let first = claim(25, at: now)
        async let second = claim(25, at: now)
        let (a, b) = try await (first, second)
        #expect(Set(a.map(\.id)).isDisjoint(with: Set(b.map(\.id))))
        // With a per-project cap the claim cannot skip locked rows (PostgreSQL): a worker that waited for another's
        // claim may come back with less, never with a message twice. What is left goes to the next claims.
        var claimed = a + b
        while case let more = try await claim(25, at: now), !more.isEmpty {
            #expect(Set(more.map(\.id)).isDisjoint(with: Set(claimed.map(\.id))))
            claimed += more
        }
        #expect(claimed.count == 40)
        if perProject == nil { #expect(a.count + b.count == 40) }
        // A worker that died mid-send leaves the message to be taken again once its lease ran out.
        #expect(try await claim(50, at: now.addingTimeInterval(61)).count == 40)
        try await node.verity.database.close()
    }

    @Test(
        "A lane claims only its channels, and at most the per-project cap of one project's",
        arguments: TestEngine.available)
    func lanesAndProjectCap(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let (other, _) = try await node.otherProject()
        let service = node.verity.verifications
        for index in 0..<6 {
            for project in [node.project, other] {
                _ = try await service.start(
                    .init(to: "+1415555\(String(format: "%04d", index + 2000))", channel: .sms), in: project)
            }
        }
        let now = node.clock.now()
        // The worker's claims, through the outbox service's seam for them.
        let outbox = node.verity.outbox
        #expect(
            try await outbox.claimDue(channels: OutboxLane.webhooks.channels, limit: 20, lease: 60, now: now).isEmpty)
        let capped = try await outbox.claimDue(
            channels: OutboxLane.messages.channels, limit: 20, perProject: 2, lease: 60, now: now)
        #expect(capped.count == 4)
        #expect(Set(capped.map(\.projectId)) == [node.project.id, other.id])
        // A project whose deliveries are still in flight is left out (the webhooks lane's per-project cap).
        let others = try await outbox.claimDue(
            channels: OutboxLane.messages.channels, limit: 20, perProject: 2, excludingProjects: [node.project.id],
            lease: 60, now: now)
        #expect(others.count == 2)
        #expect(Set(others.map(\.projectId)) == [other.id])
        try await node.verity.database.close()
    }

    @Test(
        "A provider that does not answer holds only its own message: codes queued after it are still sent",
        arguments: TestEngine.available)
    func slowProviderDoesNotHoldTheLane(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let held = "+14155550170"
        node.sender.hold(held)
        try await node.run { client in
            _ = try await client.startVerification(held, key: node.apiKey)
            try await node.sender.waitUntilHeld(held)
            // The held send is in flight; messages queued now must not wait for it.
            for index in 0..<3 {
                _ = try await client.startVerification("+1415555018\(index)", key: node.apiKey)
                try await node.sender.waitForMessages(to: "+1415555018\(index)")
            }
            #expect(node.sender.messages(to: held).isEmpty)
            node.sender.release(held)
            try await node.sender.waitForMessages(to: held)
        }
    }

    @Test(
        "A tenant's webhook endpoint that does not answer holds only its share of the lane; others' events go on",
        arguments: TestEngine.available)
    func slowWebhookEndpoint(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let (other, _) = try await node.otherProject()
        let arrivals = NIOLockedValueBox<[String: Int]>([:])
        let released = NIOLockedValueBox(false)
        let router = Router()
        router.post("/:tenant") { _, context -> HTTPResponse.Status in
            let tenant = context.parameters.get("tenant") ?? ""
            arrivals.withLockedValue { $0[tenant, default: 0] += 1 }
            while tenant == "slow", !released.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            return .ok
        }
        try await withLoopbackServer(router: router) { port in
            let challenges = node.verity.challenges
            @Sendable func queue(_ count: Int, to tenant: String, of project: Project) async throws {
                let url = "http://127.0.0.1:\(port)/\(tenant)"
                _ = try await node.verity.admin.setWebhook(projectId: project.id, url: url)
                let events = (0..<count).map {
                    QueuedMessage(
                        id: "msg_\(tenant)\($0)", channel: .webhook, destination: url, payload: "{}")
                }
                try await challenges.queue(events, projectId: project.id)
            }
            try await node.run { _ in
                try await queue(10, to: "slow", of: node.project)
                try await waitUntil { arrivals.withLockedValue { $0["slow"] } == 4 }
                // Four of the slow tenant's events are in flight and go unanswered; the other tenant's are sent.
                try await queue(3, to: "fast", of: other)
                try await waitUntil { arrivals.withLockedValue { $0["fast"] } == 3 }
                #expect(arrivals.withLockedValue { $0["slow"] } == 4)
                released.withLockedValue { $0 = true }
                try await waitUntil { arrivals.withLockedValue { $0["slow"] } == 10 }
            }
        }
    }

    @Test("The outbox never stores a code", arguments: TestEngine.available)
    func noCodesAtRest(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let database = node.verity.database
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            let code = try await node.sender.code(to: phone)
            let dump = try await database.execute { sql in
                var text = ""
                for table in ["verifications", "outbox"] {
                    for row in try await sql.raw("SELECT * FROM \(unsafeRaw: table)").all() {
                        for column in row.allColumns {
                            text += (try? row.decode(column: column, as: String.self)) ?? ""
                            text += " "
                        }
                    }
                }
                return text
            }
            #expect(!dump.contains(code))
            #expect(dump.contains(phone))
        }
    }
}

/// Polls `condition` until it holds (the worker runs concurrently with the test).
func waitUntil(
    timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("Condition not met in time", sourceLocation: sourceLocation)
    throw CancellationError()
}
