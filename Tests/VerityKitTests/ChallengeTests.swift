import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Answering challenges")
struct ChallengeTests {
    @Test("approve and deny sign exactly the canonical payload", arguments: [ChallengeAnswer.approved, .denied])
    func answerSignsCanonicalPayload(answer: ChallengeAnswer) async throws {
        let harness = try Harness()
        let (factor, key) = try await harness.enrollVerified()
        let challenge = Fixture.challenge()
        await harness.transport.enqueue(try Fixture.json(challenge))
        await harness.transport.enqueue(
            try Fixture.json(Fixture.challenge(status: answer == .approved ? .approved : .denied)))

        let answered =
            switch answer {
            case .approved: try await harness.push.approve(challengeId: challenge.id, factorId: factor.id)
            case .denied: try await harness.push.deny(challengeId: challenge.id, factorId: factor.id)
            }

        let fetch = try await harness.request(2)
        #expect(fetch.method == .get)
        #expect(fetch.url == (try Fixture.url("/v1/device/factors/\(factor.id)/challenges/\(challenge.id)")))
        _ = try verifiedDeviceClaims(fetch, key: key)

        let respond = try await harness.request(3)
        #expect(respond.method == .post)
        #expect(respond.url == (try Fixture.url("/v1/device/factors/\(factor.id)/challenges/\(challenge.id)/respond")))
        _ = try verifiedDeviceClaims(respond, key: key)
        let body = try decodeBody(RespondChallengeRequest.self, of: respond)
        #expect(body.status == answer)
        let expected = ChallengeSigningPayload(
            challengeId: challenge.id, factorId: factor.id, contentHash: challenge.contentHash, status: answer)
        #expect(try ChallengeSigningPayload.verify(body.signature, expected: expected, key: key) == answer)
        let jws = try CompactJWS(parsing: body.signature)
        #expect(jws.header == JWSHeader(alg: "ES256", typ: ChallengeSigningPayload.tokenType, kid: factor.id))
        #expect(try jws.decodePayload(ChallengeSigningPayload.self) == expected)

        #expect(answered.status == (answer == .approved ? .approved : .denied))
        #expect(await harness.transport.requests.count == 4)
    }

    @Test("a challenge whose hash does not match its content is not signed")
    func contentHashMismatch() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(
            try Fixture.json(Fixture.challenge(contentHash: String(repeating: "A", count: 43))))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.approve(challengeId: Fixture.challengeId, factorId: factor.id)
        }

        #expect(error?.code == "mapping")
        #expect(await harness.transport.requests.count == 3)
    }

    @Test("pendingChallenges asks for pending challenges with a device token")
    func pendingChallenges() async throws {
        let harness = try Harness()
        let (factor, key) = try await harness.enrollVerified()
        let challenges = [Fixture.challenge(), Fixture.challenge(id: "chl_second")]
        await harness.transport.enqueue(try Fixture.json(Page(items: challenges)))

        let pending = try await harness.push.pendingChallenges(factorId: factor.id)

        #expect(pending == challenges)
        let request = try await harness.request(2)
        #expect(request.method == .get)
        #expect(request.url == (try Fixture.url("/v1/device/factors/\(factor.id)/challenges?status=pending")))
        _ = try verifiedDeviceClaims(request, key: key)
    }

    @Test("pendingChallenges follows nextCursor to the last page")
    func pendingChallengesPages() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        let first = [Fixture.challenge(), Fixture.challenge(id: "chl_second")]
        let last = [Fixture.challenge(id: "chl_third")]
        await harness.transport.enqueue(try Fixture.json(Page(items: first, nextCursor: "chl_second")))
        await harness.transport.enqueue(try Fixture.json(Page(items: last)))

        let pending = try await harness.push.pendingChallenges(factorId: factor.id)

        #expect(pending == first + last)
        #expect(await harness.transport.requests.count == 4)
        let second = try await harness.request(3)
        #expect(
            second.url
                == (try Fixture.url(
                    "/v1/device/factors/\(factor.id)/challenges?status=pending&cursor=chl_second")))
    }

    @Test("a malformed challenge id is refused before anything is sent")
    func malformedChallengeId() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        for id in ["../verify", "chl_", "fac_123", "chl_a/b"] {
            let error = await #expect(throws: VerityKitError.self) {
                try await harness.push.getChallenge(id: id, factorId: factor.id)
            }
            #expect(error?.code == "input")
        }
        #expect(await harness.transport.requests.count == 2)
    }
}

@Suite("Device tokens")
struct DeviceTokenTests {
    @Test("each request carries a fresh ES256 device JWT signed by the enrolled key")
    func deviceTokenIsValidAndFresh() async throws {
        let harness = try Harness()
        let (factor, key) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))

        _ = try await harness.push.pendingChallenges(factorId: factor.id)
        _ = try await harness.push.pendingChallenges(factorId: factor.id)

        let first = try verifiedDeviceClaims(try await harness.request(2), key: key)
        let second = try verifiedDeviceClaims(try await harness.request(3), key: key)
        #expect(first.iat == Int(Fixture.now.timeIntervalSince1970))
        #expect(first.jti != second.jti)
    }

    @Test("a token signed by another key does not verify")
    func otherKeyDoesNotVerify() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))
        _ = try await harness.push.pendingChallenges(factorId: factor.id)

        let authorization = try #require(try await harness.request(2).value(forHeader: "Authorization"))
        let jws = try CompactJWS(parsing: String(authorization.dropFirst("Bearer ".count)))
        #expect(!jws.isValidSignature(for: P256.Signing.PrivateKey().publicKey))
    }

    @Test("a 401 with the server's Date corrects the clock and retries exactly once")
    func clockSkewRetry() async throws {
        let harness = try Harness()
        let (factor, key) = try await harness.enrollVerified()
        let serverNow = Fixture.now.addingTimeInterval(3600)
        await harness.transport.enqueue(
            try Fixture.problem(.unauthorized, headers: ["Date": Fixture.httpDate(serverNow)]))
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))

        _ = try await harness.push.pendingChallenges(factorId: factor.id)

        #expect(await harness.transport.requests.count == 4)
        let refused = try verifiedDeviceClaims(try await harness.request(2), key: key)
        let retried = try verifiedDeviceClaims(try await harness.request(3), key: key)
        #expect(refused.iat == Int(Fixture.now.timeIntervalSince1970))
        #expect(retried.iat == Int(serverNow.timeIntervalSince1970))
        #expect(retried.jti != refused.jti)
        #expect(await harness.push.clockOffset == 3600)

        // Later requests use the corrected time straight away.
        _ = try await harness.push.pendingChallenges(factorId: factor.id)
        #expect(await harness.transport.requests.count == 5)
        let later = try verifiedDeviceClaims(try await harness.request(4), key: key)
        #expect(later.iat == Int(serverNow.timeIntervalSince1970))
    }

    @Test("a second 401 is reported, not retried again")
    func retriesOnlyOnce() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        let date = Fixture.httpDate(Fixture.now.addingTimeInterval(-900))
        await harness.transport.enqueue(try Fixture.problem(.unauthorized, headers: ["Date": date]))
        await harness.transport.enqueue(try Fixture.problem(.unauthorized, headers: ["Date": date]))
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.pendingChallenges(factorId: factor.id)
        }

        #expect(error?.serverErrorCode == .unauthorized)
        #expect(await harness.transport.requests.count == 4)
        #expect(await harness.push.clockOffset == -900)
    }

    @Test("a 401 without a Date is reported without a retry")
    func noDateNoRetry() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.problem(.tokenReplayed))
        await harness.transport.enqueue(try Fixture.json(Page<DeviceChallenge>(items: [])))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.push.pendingChallenges(factorId: factor.id)
        }

        #expect(error?.problem?.code == "token_replayed")
        #expect(await harness.transport.requests.count == 3)
        #expect(await harness.push.clockOffset == 0)
    }
}
