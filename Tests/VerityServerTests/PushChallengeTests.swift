import AsyncHTTPClient
import Crypto
import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import SQLKit
import Testing
import VerityCore

@testable import VerityServer

@Suite("Push factors and challenges")
struct PushChallengeTests {
    @Test("Enroll, verify, challenge, approve: the backend sees who approved", arguments: TestEngine.available)
    func approve(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let factors = try await client.send(.get, "/v1/users/user-1/factors", key: node.apiKey)
            let listed = try factors.decode(Page<Factor>.self).items
            #expect(listed.map(\.id) == [device.factorId])
            #expect(listed.first?.status == .verified)

            let created = try await client.createChallenge(
                #"{"factorId":"\#(device.factorId)","message":"Sign in from Berlin?","details":[{"label":"IP","value":"203.0.113.7"}],"hiddenDetails":{"session":"abc"}}"#,
                key: node.apiKey)
            #expect(created.status == .created)
            let challenge = try created.decode(Challenge.self)
            #expect(challenge.id.hasPrefix("chl_"))
            #expect(challenge.status == .pending)
            #expect(challenge.expiresAt == node.clock.now().addingTimeInterval(300))

            // The push went through the outbox with the device's token.
            try await waitUntil { node.sender.pushes.count == 1 }
            let push = try #require(node.sender.pushes.first)
            #expect(push.challengeId == challenge.id)
            #expect(push.token == "a1b2c3d4")
            #expect(push.platform == .apns)
            #expect(push.body == "Sign in from Berlin?")

            let pending = try await device.pending(client: client)
            let shown = try #require(pending.first)
            #expect(shown.id == challenge.id)
            #expect(shown.details == [ChallengeDetail(label: "IP", value: "203.0.113.7")])
            #expect(shown.signedFields == ["challengeId", "factorId", "contentHash", "status"])

            let answered = try await device.answer(shown, .approved, client: client)
            #expect(answered.status == .ok)
            #expect(try answered.decode(DeviceChallenge.self).status == .approved)

            let seen = try await client.send(.get, "/v1/challenges/\(challenge.id)", key: node.apiKey)
            let result = try seen.decode(Challenge.self)
            #expect(result.status == .approved)
            #expect(result.respondedFactorId == device.factorId)
            #expect(result.hiddenDetails == ["session": "abc"])
            #expect(try await device.pending(client: client).isEmpty)

            // A second answer, even a correctly signed one, is refused.
            let again = try await device.answer(shown, .denied, client: client)
            #expect(again.status == .conflict)
            #expect(try again.problem().code == "challenge_already_answered")

            let metrics = String(buffer: try await client.send(.get, "/metrics", key: nil).body)
            #expect(metrics.contains(#"verity_challenges_created_total{type="push"} 1"#))
            #expect(metrics.contains(#"verity_challenges_approved_total{type="push"} 1"#))
            #expect(metrics.contains(#"verity_challenges_denied_total{type="push"} 0"#))
        }
    }

    @Test(
        "A push token the service calls dead is forgotten; the device can still pull", arguments: TestEngine.available)
    func deadPushToken(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        node.sender.failNextPushes(PushTokenInvalid(reason: "apns 410 Unregistered"))
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"userId":"user-1"}"#, key: node.apiKey).decode(Challenge.self)
                .id
            // The worker forgets the token, then gives the message up: wait for both.
            try await waitUntil {
                let push = try await node.verity.outbox.messages().first { $0.message.channel == .push }
                return push?.message.status == .dead
            }
            #expect(try await node.verity.factors.findFactor(id: device.factorId, in: node.project)?.pushToken == nil)
            #expect(try await device.pending(client: client).map(\.id) == [id])
            #expect(node.sender.pushes.isEmpty)
        }
    }

    @Test("Deny is recorded as denied", arguments: TestEngine.available)
    func deny(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"userId":"user-1"}"#, key: node.apiKey).decode(Challenge.self)
                .id
            let shown = try await device.pending(client: client)
            #expect(try await device.answer(try #require(shown.first), .denied, client: client).status == .ok)
            let seen = try await client.send(.get, "/v1/challenges/\(id)", key: node.apiKey).decode(Challenge.self)
            #expect(seen.status == .denied)
            #expect(seen.message == "Approve sign-in to Acme?")
        }
    }

    @Test("An expired challenge cannot be answered and fires challenge.expired", arguments: TestEngine.available)
    func expiry(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { $0.housekeepingInterval = .milliseconds(20) }
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(
                #"{"factorId":"\#(device.factorId)","expiresIn":30}"#, key: node.apiKey
            )
            .decode(Challenge.self).id
            let shown = try #require(try await device.pending(client: client).first)
            node.clock.advance(by: 31)
            let late = try await device.answer(shown, .approved, client: client)
            #expect(late.status == .gone)
            #expect(try late.problem().code == "challenge_expired")
            try await waitUntil {
                try await node.verity.challenges.current(id: id, in: node.project).status == .expired
            }
            let seen = try await client.send(.get, "/v1/challenges/\(id)", key: node.apiKey).decode(Challenge.self)
            #expect(seen.status == .expired)
        }
    }

    @Test("Another device cannot answer a challenge sent to the first", arguments: TestEngine.available)
    func foreignFactor(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let first = try await TestDevice.enrolled(node: node, client: client)
            let second = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"factorId":"\#(first.factorId)"}"#, key: node.apiKey)
                .decode(Challenge.self).id
            #expect(try await second.pending(client: client).isEmpty)
            let peek = try await client.send(
                .get, "/v1/device/factors/\(second.factorId)/challenges/\(id)", key: try second.token())
            #expect(try peek.problem().code == "wrong_factor")
            let shown = try #require(try await first.pending(client: client).first)
            let stolen = try await second.answer(shown, .approved, client: client)
            #expect(stolen.status == .forbidden)
            #expect(try stolen.problem().code == "wrong_factor")
            // A token of one factor on another factor's path.
            let crossed = try await client.send(
                .get, "/v1/device/factors/\(first.factorId)/challenges", key: try second.token())
            #expect(try crossed.problem().code == "wrong_factor")
            #expect(try await first.answer(shown, .approved, client: client).status == .ok)
        }
    }

    @Test("A user challenge reaches every device; the first answer wins", arguments: TestEngine.available)
    func firstAnswerWins(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let phone = try await TestDevice.enrolled(node: node, client: client)
            let tablet = try await TestDevice.enrolled(node: node, client: client, platform: .fcm)
            _ = try await client.createChallenge(#"{"userId":"user-1"}"#, key: node.apiKey)
            try await waitUntil { node.sender.pushes.count == 2 }
            #expect(Set(node.sender.pushes.map(\.platform)) == [.apns, .fcm])
            let onPhone = try #require(try await phone.pending(client: client).first)
            let onTablet = try #require(try await tablet.pending(client: client).first)
            #expect(onPhone.id == onTablet.id)
            #expect(try await tablet.answer(onTablet, .denied, client: client).status == .ok)
            let late = try await phone.answer(onPhone, .approved, client: client)
            #expect(try late.problem().code == "challenge_already_answered")
        }
    }

    @Test(
        "The answer route spends its device token with the answer, and a refused answer spends it too",
        arguments: TestEngine.available)
    func answerSpendsToken(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            _ = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            let shown = try #require(try await device.pending(client: client).first)
            let path = "/v1/device/factors/\(device.factorId)/challenges/\(shown.id)/respond"
            let approval = try TestDevice.json(
                RespondChallengeRequest(
                    status: .approved,
                    signature: try ChallengeSigningPayload(
                        challengeId: shown.id, factorId: device.factorId, contentHash: shown.contentHash,
                        status: .approved
                    ).sign(using: device.key, keyID: device.factorId)))

            // A body that does not decode is refused, and its token is spent all the same.
            let refusedToken = try device.token()
            #expect(try await client.send(.post, path, key: refusedToken, json: "{").status == .badRequest)
            let afterRefusal = try await client.send(.post, path, key: refusedToken, json: approval)
            #expect(try afterRefusal.problem().code == "token_replayed")

            // A good answer spends its token in its own transaction: the same request again is a replay, not a second
            // answer ("already answered"), and the challenge stays approved once.
            let token = try device.token()
            #expect(try await client.send(.post, path, key: token, json: approval).status == .ok)
            let replay = try await client.send(.post, path, key: token, json: approval)
            #expect(replay.status == .unauthorized)
            #expect(try replay.problem().code == "token_replayed")
            let challenge = try await client.send(.get, "/v1/challenges/\(shown.id)", key: node.apiKey)
            #expect(try challenge.decode(Challenge.self).status == .approved)
        }
    }

    @Test("Bad signatures and replayed device tokens are refused", arguments: TestEngine.available)
    func signatures(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            _ = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            let shown = try #require(try await device.pending(client: client).first)

            // Signed over "approved" but sent as "denied".
            let approval = try ChallengeSigningPayload(
                challengeId: shown.id, factorId: device.factorId, contentHash: shown.contentHash, status: .approved
            ).sign(using: device.key, keyID: device.factorId)
            let swapped = try await device.respond(
                challengeId: shown.id, status: .denied, signature: approval, client: client)
            #expect(try swapped.problem().code == "invalid_signature")
            // Signed by another key.
            let forged = try ChallengeSigningPayload(
                challengeId: shown.id, factorId: device.factorId, contentHash: shown.contentHash, status: .approved
            ).sign(using: P256.Signing.PrivateKey(), keyID: device.factorId)
            let wrongKey = try await device.respond(
                challengeId: shown.id, status: .approved, signature: forged, client: client)
            #expect(try wrongKey.problem().code == "invalid_signature")
            // Over other content.
            let otherContent = try ChallengeSigningPayload(
                challengeId: shown.id, factorId: device.factorId, contentHash: "AAAA", status: .approved
            ).sign(using: device.key, keyID: device.factorId)
            #expect(
                try await device.respond(
                    challengeId: shown.id, status: .approved, signature: otherContent, client: client
                )
                .problem().code == "invalid_signature")

            // One device token, twice.
            let token = try device.token()
            let path = "/v1/device/factors/\(device.factorId)/challenges"
            #expect(try await client.send(.get, path, key: token).status == .ok)
            let replay = try await client.send(.get, path, key: token)
            #expect(replay.status == .unauthorized)
            #expect(try replay.problem().code == "token_replayed")
            #expect(replay.headers[.date] != nil)

            for bad in [
                try device.token(lifetime: 3600),  // lives too long
                try device.token(issuedAt: node.clock.now().addingTimeInterval(-1000)),  // expired
                try device.token(subject: "fac_other"),  // for another factor
                "not.a.jws", "eyJhbGciOiJub25lIn0.e30.",
            ] {
                let response = try await client.send(.get, path, key: bad)
                #expect(response.status == .unauthorized)
            }
            let noneAlg =
                Base64URL.encode(Array(#"{"alg":"none","kid":"\#(device.factorId)"}"#.utf8)) + "."
                + Base64URL.encode(Array(#"{"sub":"\#(device.factorId)"}"#.utf8)) + "."
            #expect(try await client.send(.get, path, key: noneAlg).status == .unauthorized)
            #expect(try await device.answer(shown, .approved, client: client).status == .ok)
        }
    }

    @Test("Enrollment refuses bad keys, reused tokens and wrong proofs", arguments: TestEngine.available)
    func enrollment(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var device = TestDevice(clock: node.clock)
            let token = try await device.enrollmentToken(userId: "user-1", node: node, client: client)
            let badKey = try await client.send(
                .post, "/v1/device/factors", key: token,
                json: #"{"publicKey":"bm90IGEga2V5","friendlyName":"x","pushPlatform":"none"}"#)
            #expect(try badKey.problem().code == "invalid_public_key")
            let enrolled = try await device.enroll(token: token, client: client)
            let body = try enrolled.decode(EnrolledPushFactor.self)
            #expect(body.factor.status == .unverified)
            device.factorId = body.factor.id
            #expect(try await device.enroll(token: token, client: client).status == .conflict)

            // Unverified factors get no challenges.
            let early = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            #expect(try early.problem().code == "factor_not_verified")
            #expect(
                try await device.verify(token: token, nonce: "wrong-nonce", client: client).problem().code
                    == "invalid_signature")
            #expect(
                try await device.verify(token: "vet_unknown", nonce: body.nonce, client: client).status == .unauthorized
            )
            #expect(try await device.verify(token: token, nonce: body.nonce, client: client).status == .ok)
            #expect(try await device.verify(token: token, nonce: body.nonce, client: client).status == .conflict)

            let expiring = try await device.enrollmentToken(userId: "user-2", node: node, client: client)
            node.clock.advance(by: 601)
            #expect(try await device.enroll(token: expiring, client: client).status == .unauthorized)
            let noFactors = try await client.createChallenge(#"{"userId":"user-2"}"#, key: node.apiKey)
            #expect(try noFactors.problem().code == "no_verified_factors")
        }
    }

    @Test(
        "Deleting a factor, by the backend or by its device, expires its pending challenges at once",
        arguments: TestEngine.available)
    func deleteExpiresChallenges(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for byDevice in [false, true] {
                let device = try await TestDevice.enrolled(node: node, client: client)
                let id = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
                    .decode(Challenge.self).id
                let deleted =
                    byDevice
                    ? try await client.send(
                        .delete, "/v1/device/factors/\(device.factorId)", key: try device.token())
                    : try await client.send(.delete, "/v1/factors/\(device.factorId)", key: node.apiKey)
                #expect(deleted.status == .noContent)
                let seen = try await client.send(.get, "/v1/challenges/\(id)", key: node.apiKey)
                #expect(try seen.decode(Challenge.self).status == .expired)
            }
        }
    }

    @Test(
        "A device pages through its pending challenges, newest first, with nextCursor",
        arguments: TestEngine.available)
    func pendingPages(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            var created: [String] = []
            for _ in 0..<5 {
                created.append(
                    try await client.createChallenge(#"{"userId":"user-1"}"#, key: node.apiKey).decode(Challenge.self)
                        .id)
                node.clock.advance(by: 1)
            }
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "status=pending&limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await client.send(
                    .get, "/v1/device/factors/\(device.factorId)/challenges?\(query)", key: try device.token())
                let page = try response.decode(Page<DeviceChallenge>.self)
                #expect(page.items.count == (pages < 2 ? 2 : 1))
                seen += page.items.map(\.id)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 5
            #expect(pages == 3)
            #expect(seen == created.reversed())
            for bad in ["limit=0", "limit=51", "limit=x", "cursor=nope"] {
                let refused = try await client.send(
                    .get, "/v1/device/factors/\(device.factorId)/challenges?\(bad)", key: try device.token())
                #expect(try refused.problem().code == "invalid_request", "\(bad)")
            }
        }
    }

    @Test(
        "A push factor carries the app's metadata for the backend; the device replaces or removes it; too much is refused",
        arguments: TestEngine.available)
    func metadata(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var device = TestDevice(clock: node.clock)
            let token = try await device.enrollmentToken(userId: "user-1", node: node, client: client)
            let tooLong = ["notes": String(repeating: "x", count: FactorMetadata.maxLength)]
            for bad in [tooLong, ["": "empty key"]] {
                let refused = try await device.enroll(token: token, client: client, metadata: bad)
                #expect(try refused.problem().code == "invalid_request")
            }
            let enrolled = try await device.enroll(
                token: token, client: client, metadata: ["model": "iPhone16,2", "app": "2.4"])
            device.factorId = try enrolled.decode(EnrolledPushFactor.self).factor.id
            let seen = try await client.send(.get, "/v1/factors/\(device.factorId)", key: node.apiKey)
            #expect(try seen.decode(Factor.self).metadata == ["model": "iPhone16,2", "app": "2.4"])

            let path = "/v1/device/factors/\(device.factorId)"
            let renamed = try await client.send(
                .patch, path, key: try device.token(), json: #"{"friendlyName":"Work phone"}"#)
            #expect(try renamed.decode(Factor.self).metadata == ["model": "iPhone16,2", "app": "2.4"])
            let replaced = try await client.send(
                .patch, path, key: try device.token(), json: #"{"metadata":{"app":"2.5"}}"#)
            #expect(try replaced.decode(Factor.self).metadata == ["app": "2.5"])
            let refused = try await client.send(
                .patch, path, key: try device.token(), json: try TestDevice.json(UpdateFactorRequest(metadata: tooLong))
            )
            #expect(try refused.problem().code == "invalid_request")
            let removed = try await client.send(.patch, path, key: try device.token(), json: #"{"metadata":{}}"#)
            #expect(try removed.decode(Factor.self).metadata == nil)
            let listed = try await client.send(.get, "/v1/users/user-1/factors", key: node.apiKey)
            #expect(try listed.decode(Page<Factor>.self).items.map(\.metadata) == [nil])
        }
    }

    @Test(
        "Upgrading moves the metadata the Twilio face kept for a factor onto the factor itself",
        arguments: TestEngine.available)
    func metadataUpgrade(engine: TestEngine) async throws {
        let old = try await TestNode.make(engine, location: engine.persistentLocation())
        // Enrolled, then the schema as version 11 left it: metadata only in twilio_factors (run closes the database).
        let factorId = try await old.run { client in
            let factorId = try await TestDevice.enrolled(node: old, client: client).factorId
            try await old.verity.database.execute { sql in
                try await sql.raw("ALTER TABLE factors DROP COLUMN metadata").run()
                try await sql.raw("DELETE FROM schema_migrations WHERE version = 12").run()
                try await sql.raw(
                    """
                    INSERT INTO twilio_factors (factor_id, service_sid, identity, metadata, updated_at)
                    VALUES (\(bind: factorId), 'VA00000000000000000000000000000000', 'user-1', '{"os":"iOS"}', 0)
                    """
                ).run()
            }
            return factorId
        }

        let node = try await old.reopened()
        try await node.run { client in
            let seen = try await client.send(.get, "/v1/factors/\(factorId)", key: node.apiKey)
            #expect(try seen.decode(Factor.self).metadata == ["os": "iOS"])
        }
    }

    @Test("A user's factors come in pages, oldest first, with nextCursor", arguments: TestEngine.available)
    func factorPages(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var created: [String] = []
            for index in 0..<3 {
                let response = try await client.send(
                    .post, "/v1/users/jane/factors/totp", key: node.apiKey, json: #"{"friendlyName":"App \#(index)"}"#)
                created.append(try response.decode(CreatedTOTPFactor.self).factor.id)
                node.clock.advance(by: 1)
            }
            let first = try await client.send(.get, "/v1/users/jane/factors?limit=2", key: node.apiKey)
                .decode(Page<Factor>.self)
            #expect(first.items.map(\.id) == Array(created.prefix(2)))
            let cursor = try #require(first.nextCursor)
            let second = try await client.send(
                .get, "/v1/users/jane/factors?limit=2&cursor=\(cursor)", key: node.apiKey
            ).decode(Page<Factor>.self)
            #expect(second.items.map(\.id) == [created[2]])
            #expect(second.nextCursor == nil)
            let all = try await client.send(.get, "/v1/users/jane/factors", key: node.apiKey).decode(Page<Factor>.self)
            #expect(all.items.map(\.id) == created)
            for bad in ["limit=0", "limit=101", "cursor=nope"] {
                let refused = try await client.send(.get, "/v1/users/jane/factors?\(bad)", key: node.apiKey)
                #expect(try refused.problem().code == "invalid_request", "\(bad)")
            }
        }
    }

    @Test("A device can update its push token and delete itself", arguments: TestEngine.available)
    func updateAndDelete(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let path = "/v1/device/factors/\(device.factorId)"
            let patched = try await client.send(
                .patch, path, key: try device.token(), json: #"{"pushToken":"ffee","friendlyName":"New phone"}"#)
            #expect(try patched.decode(Factor.self).friendlyName == "New phone")
            _ = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            try await waitUntil { node.sender.pushes.count == 1 }
            #expect(node.sender.pushes.first?.token == "ffee")
            #expect(try await client.send(.delete, path, key: try device.token()).status == .noContent)
            let gone = try await client.send(.get, "/v1/users/user-1/factors", key: node.apiKey)
            #expect(try gone.decode(Page<Factor>.self).items.isEmpty)
            #expect(try await client.send(.get, path + "/challenges", key: try device.token()).status == .unauthorized)
        }
    }

    @Test("Long-poll returns as soon as the challenge is answered", arguments: TestEngine.available)
    func longPoll(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run(.live) { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
                .decode(Challenge.self).id
            // The long poll runs on its own connection, as a backend's would.
            let port = try #require(client.port)
            // A wait longer than any answer can take under load: returning well before it is the answer's doing.
            var poll = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/challenges/\(id)?wait=25")
            poll.headers.add(name: "Authorization", value: "Bearer \(node.apiKey)")
            async let waited = HTTPClient.shared.execute(poll, timeout: .seconds(30)).body.collect(upTo: 1 << 20)
            try await Task.sleep(for: .milliseconds(300))
            let started = ContinuousClock.now
            let shown = try #require(try await device.pending(client: client).first)
            #expect(try await device.answer(shown, .approved, client: client).status == .ok)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let result = try decoder.decode(Challenge.self, from: try await waited)
            #expect(result.status == .approved)
            #expect(ContinuousClock.now - started < .seconds(20))
            let tooLong = try await client.send(.get, "/v1/challenges/\(id)?wait=61", key: node.apiKey)
            #expect(try tooLong.problem().code == "invalid_request")
        }
    }

    @Test("Challenge results go to the project's webhook, signed", arguments: TestEngine.available)
    func webhook(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let secrets = NIOLockedValueBox<String?>(nil)
        let requests = try await withStandIn(answer: StandInAnswer(status: .ok, body: "")) { baseURL, _ in
            let project = try await node.verity.admin.setWebhook(projectId: node.project.id, url: baseURL + "/hooks")
            let secret = try #require(project.webhookSecret)
            #expect(secret.hasPrefix("whsec_"))
            secrets.withLockedValue { $0 = secret }
            try await node.run { client in
                try await node.approveOneChallenge(client: client)
                try await node.webhookDelivered()
            }
        }
        let request = try #require(requests.first)
        #expect(request.path == "/hooks")
        let secret = try #require(secrets.withLockedValue { $0 })
        let signature = try #require(request.headers["verity-signature"] ?? request.headers["Verity-Signature"])
        #expect(WebhookSignature.verify(header: signature, secret: secret, body: request.body, now: Date()))
        let event = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        #expect(event?["type"] as? String == "challenge.approved")
        #expect((event?["data"] as? [String: Any])?["status"] as? String == "approved")
    }

    @Test("Tenancy: another project sees none of this project's factors or challenges", arguments: TestEngine.available)
    func tenancy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let other = try await node.otherProject()
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let id = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
                .decode(Challenge.self).id
            #expect(try await client.send(.get, "/v1/challenges/\(id)", key: other.apiKey).status == .notFound)
            #expect(
                try await client.send(.get, "/v1/factors/\(device.factorId)", key: other.apiKey).status == .notFound)
            let listed = try await client.send(.get, "/v1/users/user-1/factors", key: other.apiKey)
            #expect(try listed.decode(Page<Factor>.self).items.isEmpty)
            let foreign = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: other.apiKey)
            #expect(try foreign.problem().code == "factor_not_found")
        }
    }
}

@Suite("TOTP factors")
struct TOTPFactorTests {
    @Test(
        "Create, verify with a first code, then challenges answer at once; a code works once",
        arguments: TestEngine.available)
    func totp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let created = try await client.send(
                .post, "/v1/users/jane%40example.com/factors/totp", key: node.apiKey,
                json: #"{"friendlyName":"Authenticator","algorithm":"SHA256","digits":8}"#)
            #expect(created.status == .created)
            let factor = try created.decode(CreatedTOTPFactor.self)
            #expect(factor.factor.userId == "jane@example.com")
            #expect(factor.uri.hasPrefix("otpauth://totp/Acme:jane%40example.com?secret=\(factor.secret)"))
            let totp = try TOTP(
                secret: try #require(Base32.decode(factor.secret)), algorithm: .sha256, digits: 8, period: 30)

            let early = try await client.createChallenge(
                #"{"factorId":"\#(factor.factor.id)","code":"12345678"}"#, key: node.apiKey)
            #expect(try early.problem().code == "factor_not_verified")
            let wrong = try await client.send(
                .post, "/v1/factors/\(factor.factor.id)/verify", key: node.apiKey, json: #"{"code":"00000000"}"#)
            #expect(try wrong.problem().code == "invalid_code")
            let first = totp.code(at: node.clock.now())
            let verified = try await client.send(
                .post, "/v1/factors/\(factor.factor.id)/verify", key: node.apiKey, json: #"{"code":"\#(first)"}"#)
            #expect(try verified.decode(Factor.self).status == .verified)

            // The code that verified the factor is spent.
            let reused = try await client.createChallenge(
                #"{"factorId":"\#(factor.factor.id)","code":"\#(first)"}"#, key: node.apiKey)
            #expect(try reused.decode(Challenge.self).status == .denied)
            node.clock.advance(by: 30)
            let next = totp.code(at: node.clock.now())
            let approved = try await client.createChallenge(
                #"{"factorId":"\#(factor.factor.id)","code":"\#(next)"}"#, key: node.apiKey)
            #expect(approved.status == .created)
            #expect(try approved.decode(Challenge.self).status == .approved)
            // One step of skew is accepted: the previous step's code still works if unused.
            node.clock.advance(by: 30)
            let skewed = totp.code(at: node.clock.now().addingTimeInterval(30))
            #expect(
                try await client.createChallenge(
                    #"{"factorId":"\#(factor.factor.id)","code":"\#(skewed)"}"#, key: node.apiKey
                )
                .decode(Challenge.self).status == .approved)
            let missing = try await client.createChallenge(#"{"factorId":"\#(factor.factor.id)"}"#, key: node.apiKey)
            #expect(try missing.problem().code == "invalid_request")
        }
    }

    @Test("The TOTP secret is stored sealed, never in clear", arguments: TestEngine.available)
    func sealedSecret(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let database = node.verity.database
        try await node.run { client in
            let created = try await client.send(
                .post, "/v1/users/u/factors/totp", key: node.apiKey, json: #"{"friendlyName":"A"}"#)
            let secret = try created.decode(CreatedTOTPFactor.self).secret
            let stored = try await database.execute { sql in
                try await sql.raw("SELECT totp_secret FROM factors").first()?.decode(
                    column: "totp_secret", as: String.self)
            }
            let raw = try #require(Base32.decode(secret))
            #expect(stored != nil)
            #expect(stored?.contains(secret) == false)
            #expect(stored?.contains(Data(raw).base64EncodedString()) == false)
        }
    }
}
