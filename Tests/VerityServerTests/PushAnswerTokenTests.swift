import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The device token's single use on the answer route, where the answer spends it: on PostgreSQL an answer with no
/// webhook to queue is one statement (the token's use, the challenge and the project's webhook look-up chained),
/// with a webhook it is a transaction; SQLite runs both as one transaction. The rules must hold on every one of them.
@Suite("Push answers and their device tokens")
struct PushAnswerTokenTests {
    @Test(
        "A replayed token answers nothing; a refused answer spends its token; the first answer wins",
        arguments: TestEngine.available, [false, true])
    func tokenRules(engine: TestEngine, webhook: Bool) async throws {
        let node = try await TestNode.make(engine)
        if webhook {
            // Nothing listens there: the event only has to be queued with the answer.
            _ = try await node.verity.admin.setWebhook(projectId: node.project.id, url: "http://127.0.0.1:9/hooks")
        }
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
                .decode(Challenge.self).id
            let shown = try #require(try await device.pending(client: client).first)
            let path = "/v1/device/factors/\(device.factorId)/challenges/\(id)/respond"
            let approval = try Self.answer(shown, .approved, by: device)
            let status = { @Sendable () async throws -> ChallengeStatus in
                try await client.send(.get, "/v1/challenges/\(id)", key: node.apiKey).decode(Challenge.self).status
            }

            // A token spent on another request answers nothing.
            let spent = try device.token()
            #expect(
                try await client.send(.get, "/v1/device/factors/\(device.factorId)/challenges", key: spent).status
                    == .ok)
            let replayed = try await client.send(.post, path, key: spent, json: approval)
            #expect(replayed.status == .unauthorized)
            #expect(try replayed.problem().code == "token_replayed")
            #expect(try await status() == .pending)

            // The answer spends its token: the same request again is a replay, not a second answer.
            let token = try device.token()
            #expect(try await client.send(.post, path, key: token, json: approval).status == .ok)
            let again = try await client.send(.post, path, key: token, json: approval)
            #expect(try again.problem().code == "token_replayed")

            // A later answer with a fresh token is refused by the challenge, and that refusal spent its token.
            let late = try device.token()
            let denial = try Self.answer(shown, .denied, by: device)
            let refused = try await client.send(.post, path, key: late, json: denial)
            #expect(refused.status == .conflict)
            #expect(try refused.problem().code == "challenge_already_answered")
            let lateAgain = try await client.send(.get, "/v1/device/factors/\(device.factorId)/challenges", key: late)
            #expect(try lateAgain.problem().code == "token_replayed")
            #expect(try await status() == .approved)

            // An expired challenge refuses the answer, and spends its token too.
            let brief = try await client.createChallenge(
                #"{"factorId":"\#(device.factorId)","expiresIn":30}"#, key: node.apiKey
            ).decode(Challenge.self).id
            let shownBrief = try #require(try await device.pending(client: client).first { $0.id == brief })
            node.clock.advance(by: 31)
            let expiredToken = try device.token()
            let expired = try await client.send(
                .post, "/v1/device/factors/\(device.factorId)/challenges/\(brief)/respond", key: expiredToken,
                json: try Self.answer(shownBrief, .approved, by: device))
            #expect(try expired.problem().code == "challenge_expired")
            let expiredAgain = try await client.send(
                .get, "/v1/device/factors/\(device.factorId)/challenges", key: expiredToken)
            #expect(try expiredAgain.problem().code == "token_replayed")

            // One answer recorded, so one webhook event queued with it (and none for the refusals). Housekeeping may
            // meanwhile expire `brief` and fire its challenge.expired, which is no answer's: it is not counted.
            let events = try await node.verity.outbox.messages().filter {
                $0.message.channel == .webhook && $0.message.payload?.contains(#""challenge.expired""#) != true
            }
            #expect(events.count == (webhook ? 1 : 0))
        }
    }

    @Test(
        "Concurrent answers: one wins, every other is refused and spends its token; one token answers once",
        arguments: TestEngine.available)
    func concurrentAnswers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            for _ in 0..<2 {
                _ = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            }
            let shown = try await device.pending(client: client)
            try #require(shown.count == 2)

            // Ten answers to one challenge, each with its own token.
            let first = shown[0]
            let approval = try Self.answer(first, .approved, by: device)
            let path = "/v1/device/factors/\(device.factorId)/challenges/\(first.id)/respond"
            let tokens = try (0..<10).map { _ in try device.token() }
            let codes = try await Self.sentAtOnce(tokens, path: path, json: approval, client: client)
            #expect(codes.filter { $0 == "ok" }.count == 1)
            #expect(codes.filter { $0 == "challenge_already_answered" }.count == 9)
            for token in tokens {
                let reused = try await client.send(.get, "/v1/device/factors/\(device.factorId)/challenges", key: token)
                #expect(try reused.problem().code == "token_replayed")
            }

            // One token, ten times at once, on the other challenge.
            let second = shown[1]
            let secondApproval = try Self.answer(second, .approved, by: device)
            let secondPath = "/v1/device/factors/\(device.factorId)/challenges/\(second.id)/respond"
            let token = try device.token()
            let sameToken = try await Self.sentAtOnce(
                Array(repeating: token, count: 10), path: secondPath, json: secondApproval, client: client)
            #expect(sameToken.filter { $0 == "ok" }.count == 1)
            #expect(sameToken.filter { $0 == "token_replayed" }.count == 9)
        }
    }

    /// One answer to `path` per token, all sent at once: "ok" or the refusal's code for each.
    private static func sentAtOnce(_ tokens: [String], path: String, json: String, client: some TestClientProtocol)
        async throws -> [String]
    {
        try await withThrowingTaskGroup(of: String.self) { group in
            for token in tokens {
                group.addTask {
                    let response = try await client.send(.post, path, key: token, json: json)
                    return response.status == .ok ? "ok" : try response.problem().code
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
    }

    private static func answer(_ challenge: DeviceChallenge, _ status: ChallengeAnswer, by device: TestDevice)
        throws -> String
    {
        try TestDevice.json(
            RespondChallengeRequest(
                status: status,
                signature: try ChallengeSigningPayload(
                    challengeId: challenge.id, factorId: device.factorId, contentHash: challenge.contentHash,
                    status: status
                ).sign(using: device.key, keyID: device.factorId)))
    }
}
