import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The holes an outside review found (findings 1 to 4), each driven the way an attacker would, at the level a user
/// sees: status and error code, what was delivered, what is stored.
@Suite("Security round: case variants, step-up replay, test numbers, one send policy")
struct SecurityRoundTests {
    static let variants = ["john@x.com", "JoHn@x.com", "JOHN@x.com", "jOhn@x.com"]

    // MARK: - Finding 1: case variants of one address are one destination

    @Test(
        "API verifications: every case variant finds the one pending code, its attempts and its bucket",
        arguments: TestEngine.available)
    func apiCaseVariants(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perDestination = RateLimitPolicy(capacity: 4, period: 3600)
        }
        try await node.run { client in
            var ids: Set<String> = []
            for (index, variant) in Self.variants.enumerated() {
                let started = try await client.startVerification(variant, channel: "email", key: node.apiKey)
                #expect(started.status == .created)
                let verification = try started.decode(VerificationResponse.self)
                ids.insert(verification.id)
                #expect(verification.sendAttempts == index + 1)
            }
            #expect(ids.count == 1)
            // The address as first given is what the messages go to: one mailbox, one code.
            let messages = try await node.sender.waitForMessages(to: "john@x.com", count: 4)
            #expect(Set(messages.compactMap { RecordingSender.code(in: $0.body) }).count == 1)
            #expect(node.sender.messages().count == 4)

            // The destination's bucket (4 here) is shared by the variants.
            let limited = try await client.startVerification("JOHN@X.COM", channel: "email", key: node.apiKey)
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.problem().code == "rate_limited")

            // Five wrong codes over five spellings kill the one code.
            let code = try #require(RecordingSender.code(in: messages[0].body))
            for (index, variant) in (Self.variants + ["JOHN@x.COM"]).enumerated() {
                let wrong = try await client.check(to: variant, code: wrongCode(for: code), key: node.apiKey)
                #expect(wrong.status == .ok)
                let status = try wrong.decode(CheckVerificationResponse.self).status
                #expect(status == (index == 4 ? .maxAttemptsReached : .pending))
            }
            let dead = try await client.check(id: try #require(ids.first), code: code, key: node.apiKey)
            #expect(try dead.problem().code == "max_check_attempts_reached")
        }
    }

    @Test(
        "Sign-in: case variants share one code, one set of attempts and one login-id bucket",
        arguments: TestEngine.available)
    func signInCaseVariants(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perLoginId = RateLimitPolicy(capacity: 9, period: 3600)
        }
        try await node.run { client in
            _ = try await client.signIn("john@x.com", node: node)
            var ids: Set<String> = []
            for variant in Self.variants {
                let started = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"\#(variant)"}"#)
                #expect(started.status == .ok)
                ids.insert(try started.decode(OTPStartResponse.self).verificationId)
            }
            #expect(ids.count == 1)
            let code = try await node.sender.code(to: "john@x.com", count: 5)
            #expect(node.sender.messages().count == 5)

            // Three guesses left in the shared bucket of 9 (2 taken by the first sign-in, 4 by the starts), and
            // they count on the one code.
            for (index, variant) in ["JoHn@x.com", "jOhn@x.com", "JOHN@x.com"].enumerated() {
                let wrong = try await client.auth(
                    .post, "otp/verify", project: node.project,
                    json: #"{"loginId":"\#(variant)","code":"\#(wrongCode(for: code))"}"#)
                #expect(try wrong.problem().code == "wrong_code")
                #expect(try wrong.problem().remainingAttempts == 4 - index)
            }
            let limited = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"JOHN@X.com","code":"\#(code)"}"#)
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test(
        "Sign-in: the code sent for one spelling signs in the one user of every spelling",
        arguments: TestEngine.available)
    func signInOneUser(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let first = try await client.signIn("john@x.com", node: node)
            _ = try await client.auth(.post, "otp/start", project: node.project, json: #"{"loginId":"JOHN@x.com"}"#)
            let code = try await node.sender.code(to: "JOHN@x.com")
            let verified = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"jOhn@X.com","code":"\#(code)"}"#)
            let again = try verified.decode(AuthResponse.self)
            #expect(again.user.id == first.user.id && !again.firstSeen)
        }
    }

    @Test("Twilio face: case variants of an email To are one verification", arguments: TestEngine.available)
    func twilioCaseVariants(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            var sids: Set<String> = []
            for variant in Self.variants {
                let started = try await client.twilio(
                    .post, "/Services/\(service)/Verifications", auth: auth, form: ["To": variant, "Channel": "email"])
                #expect(started.status == .created)
                sids.insert(try #require(try started.json()["sid"] as? String))
            }
            #expect(sids.count == 1)
            let code = try await node.sender.code(to: "john@x.com", count: 4)
            let checked = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": "JOHN@X.COM", "Code": code])
            #expect(try checked.json()["status"] as? String == "approved")
        }
    }

    // MARK: - Finding 2: an approval steps up one session, once

    @Test(
        "Step-up by push: an approved challenge steps up once, and not after it expires",
        arguments: TestEngine.available)
    func stepUpReplay(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550120", node: node)
            let device = try await TestDevice.enrolled(userId: signIn.user.id, node: node, client: client)
            func approvedChallenge() async throws -> String {
                let started = try await client.auth(
                    .post, "stepup/start", project: node.project, session: signIn.sessionJwt)
                let challengeId = try #require(try started.decode(StepUpStartResponse.self).challengeId)
                let pending = try #require(try await device.pending(client: client).first { $0.id == challengeId })
                #expect(try await device.answer(pending, .approved, client: client).status == .ok)
                return challengeId
            }
            func verify(_ challengeId: String) async throws -> TestResponse {
                try await client.auth(
                    .post, "stepup/verify", project: node.project, json: #"{"challengeId":"\#(challengeId)"}"#,
                    session: signIn.sessionJwt)
            }

            let challengeId = try await approvedChallenge()
            #expect(try await verify(challengeId).status == .ok)
            let replayed = try await verify(challengeId)
            #expect(replayed.status == .conflict)
            #expect(try replayed.problem().code == "challenge_already_answered")

            // Ten at once: exactly one steps up.
            let raced = try await approvedChallenge()
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<10 { group.addTask { try await verify(raced).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .conflict }.count == 9)

            // An approval not used within the challenge's lifetime is spent.
            let late = try await approvedChallenge()
            node.clock.advance(by: TimeInterval(AuthService.stepUpChallengeLifetime + 1))
            let expired = try await verify(late)
            #expect(try expired.problem().code == "challenge_expired")
        }
    }

    // MARK: - Finding 3: test numbers have the guessing limits of any number

    @Test(
        "Sign-in: a test number's fixed code is guarded by the login-id bucket, whatever the client",
        arguments: TestEngine.available)
    func testNumberBruteForce(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perClientAddress = RateLimitPolicy(capacity: 1000, period: 1)
            configuration.rateLimits.perLoginId = RateLimitPolicy(capacity: 4, period: 3600)
        }
        try await node.run { client in
            _ = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"123456"}"#)
            var statuses: [HTTPResponse.Status] = []
            for guess in ["000001", "000002", "000003", "000004", "000005", "123456"] {
                let start = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"+16505551234","resend":false}"#)
                statuses.append(start.status)
                let verify = try await client.auth(
                    .post, "otp/verify", project: node.project,
                    json: #"{"loginId":"+16505551234","code":"\#(guess)"}"#)
                statuses.append(verify.status)
            }
            #expect(statuses.prefix(4) == [.ok, .unauthorized, .ok, .unauthorized])
            #expect(statuses.dropFirst(4).allSatisfy { $0 == .tooManyRequests })
        }
    }

    @Test(
        "Possession: a mobile flow the backend started for a number never becomes a test-number flow",
        arguments: TestEngine.available)
    func possessionTestNumberSwitch(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"123456"}"#)

            // Mobile: the app switches to the test number; a real code goes there and the fixed one is wrong.
            let mobile = try await TestFlow.start(
                #"{"phoneNumber":"+14155550130","flow":"mobile"}"#, node: node, client: client)
            #expect(try await mobile.step("otp/start", client: client).status == .ok)
            let switched = try await mobile.step(
                "otp/change-number", json: #"{"phoneNumber":"+16505551234"}"#, client: client)
            #expect(switched.status == .ok)
            let sentCode = try await node.sender.code(to: "+16505551234")
            let fixed = try await mobile.step("otp/finish", json: #"{"code":"123456"}"#, client: client)
            #expect(try fixed.problem().code == "wrong_code" || sentCode == "123456")
            #expect(try await mobile.validate(client: client).success == false)
        }
    }

    @Test(
        "Possession: validate says when the number proven was a test number", arguments: TestEngine.available)
    func possessionValidateSaysTestNumber(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"123456"}"#)
            let test = try await TestFlow.start(
                #"{"phoneNumber":"+16505551234","flow":"mobile"}"#, node: node, client: client)
            #expect(try await test.step("otp/start", client: client).status == .ok)
            #expect(try await test.step("otp/finish", json: #"{"code":"123456"}"#, client: client).status == .ok)
            let validation = try await test.validate(client: client)
            #expect(validation.success && validation.testNumber)

            let real = try await TestFlow.start(
                #"{"phoneNumber":"+14155550132","flow":"mobile"}"#, node: node, client: client)
            #expect(try await real.step("otp/start", client: client).status == .ok)
            let code = try await node.sender.code(to: "+14155550132")
            #expect(try await real.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client).status == .ok)
            let proven = try await real.validate(client: client)
            #expect(proven.success && !proven.testNumber)
        }
    }

    // MARK: - Finding 4: one send policy on every path that sends

    @Test(
        "Step-up codes follow the send policy: premium-rate and blocked-country numbers on a user are refused",
        arguments: TestEngine.available)
    func stepUpSendPolicy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(allowedCountries: ["US"]))
        try await node.run { client in
            let signIn = try await client.signIn("eve@example.com", node: node)
            for (number, code) in [("+19005550100", "premium_rate_number"), ("+442071838750", "country_not_allowed")] {
                let patched = try await client.send(
                    .patch, "/v1/users/\(signIn.user.id)", key: node.apiKey,
                    json: #"{"loginIds":["eve@example.com","\#(number)"]}"#)
                #expect(patched.status == .ok)
                let refused = try await client.auth(
                    .post, "stepup/start", project: node.project, json: #"{"method":"otp"}"#,
                    session: signIn.sessionJwt)
                #expect(refused.status == .forbidden)
                #expect(try refused.problem().code == code)
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+19005550100").isEmpty)
            #expect(node.sender.messages(to: "+442071838750").isEmpty)
        }
    }

    @Test(
        "Step-up codes take the number-block and destination buckets like every other send",
        arguments: TestEngine.available)
    func stepUpSendLimits(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perNumberBlock = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await node.run { client in
            var sessions: [String] = []
            for index in 0..<3 {
                let signIn = try await client.signIn("user\(index)@example.com", node: node)
                _ = try await client.send(
                    .patch, "/v1/users/\(signIn.user.id)", key: node.apiKey,
                    json: #"{"loginIds":["user\#(index)@example.com","+1415555014\#(index)"]}"#)
                sessions.append(signIn.sessionJwt)
            }
            var statuses: [HTTPResponse.Status] = []
            for session in sessions {
                statuses.append(
                    try await client.auth(
                        .post, "stepup/start", project: node.project, json: #"{"method":"otp"}"#, session: session
                    ).status)
            }
            #expect(statuses == [.ok, .ok, .tooManyRequests])
        }
    }
}
