import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Five wrong codes in a row lock a factor, whichever face the codes come through.
@Suite("Factor lock-out")
struct FactorLockoutTests {
    @Test(
        "Native TOTP factor verification locks after five wrong codes, like Twilio's", arguments: TestEngine.available)
    func nativeVerification(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let (factorId, totp) = try await Self.createTOTPFactor(node: node, client: client)
            let right = totp.code(at: node.clock.now())
            for attempt in 1...5 {
                let wrong = try await client.send(
                    .post, "/v1/factors/\(factorId)/verify", key: node.apiKey,
                    json: #"{"code":"\#(wrongCode(for: right))"}"#)
                #expect(wrong.status == (attempt < 5 ? .badRequest : .tooManyRequests))
                #expect(try wrong.problem().code == (attempt < 5 ? "invalid_code" : "factor_locked"))
            }
            let locked = try await client.send(
                .post, "/v1/factors/\(factorId)/verify", key: node.apiKey, json: #"{"code":"\#(right)"}"#)
            #expect(locked.status == .tooManyRequests)
            #expect(try locked.problem().code == "factor_locked")
            let factor = try await client.send(.get, "/v1/factors/\(factorId)", key: node.apiKey)
            #expect(try factor.decode(Factor.self).status == .unverified)
        }
    }

    @Test(
        "A TOTP challenge stops accepting codes after five wrong ones, until the lock ends",
        arguments: TestEngine.available)
    func nativeChallenges(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let (factorId, totp) = try await Self.createTOTPFactor(node: node, client: client)
            let verified = try await client.send(
                .post, "/v1/factors/\(factorId)/verify", key: node.apiKey,
                json: #"{"code":"\#(totp.code(at: node.clock.now()))"}"#)
            #expect(verified.status == .ok)
            node.clock.advance(by: 30)
            let right = totp.code(at: node.clock.now())
            for attempt in 1...5 {
                let wrong = try await client.createChallenge(
                    #"{"factorId":"\#(factorId)","code":"\#(wrongCode(for: right))"}"#, key: node.apiKey)
                if attempt < 5 {
                    #expect(try wrong.decode(Challenge.self).status == .denied)
                } else {
                    #expect(wrong.status == .tooManyRequests)
                    #expect(try wrong.problem().code == "factor_locked")
                }
            }
            let refused = try await client.createChallenge(
                #"{"factorId":"\#(factorId)","code":"\#(right)"}"#, key: node.apiKey)
            #expect(try refused.problem().code == "factor_locked")

            // A right code in a fresh run after the lock: approved, and the count starts again.
            node.clock.advance(by: FactorService.lockout + 30)
            let later = try await client.createChallenge(
                #"{"factorId":"\#(factorId)","code":"\#(totp.code(at: node.clock.now()))"}"#, key: node.apiKey)
            #expect(try later.decode(Challenge.self).status == .approved)
        }
    }

    @Test("A Twilio TOTP challenge stops accepting codes after five wrong ones (60310)")
    func twilioChallenges() async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let base = "/Services/\(service)/Entities/ent-lock"
            let created = try await client.twilio(
                .post, base + "/Factors", auth: auth, form: ["FriendlyName": "Jane", "FactorType": "totp"])
            let sid = try #require(try created.json()["sid"] as? String)
            let secret = try #require(
                ((try created.json()["binding"] as? [String: String])?["secret"]).flatMap(Base32.decode))
            let totp = try TOTP(secret: secret)
            let verified = try await client.twilio(
                .post, base + "/Factors/\(sid)", auth: auth, form: ["AuthPayload": totp.code(at: node.clock.now())])
            #expect(try verified.json()["status"] as? String == "verified")
            node.clock.advance(by: 30)
            let right = totp.code(at: node.clock.now())
            for attempt in 1...5 {
                let wrong = try await client.twilio(
                    .post, base + "/Challenges", auth: auth,
                    form: ["FactorSid": sid, "AuthPayload": wrongCode(for: right)])
                if attempt < 5 {
                    #expect(try wrong.json()["status"] as? String == "denied")
                } else {
                    #expect(wrong.status == .tooManyRequests)
                    #expect(try wrong.json()["code"] as? Int == 60310)
                }
            }
            let refused = try await client.twilio(
                .post, base + "/Challenges", auth: auth, form: ["FactorSid": sid, "AuthPayload": right])
            #expect(try refused.json()["code"] as? Int == 60310)
        }
    }

    static func createTOTPFactor(node: TestNode, client: some TestClientProtocol) async throws -> (String, TOTP) {
        let created = try await client.send(
            .post, "/v1/users/jane/factors/totp", key: node.apiKey, json: #"{"friendlyName":"Authenticator"}"#)
        let factor = try created.decode(CreatedTOTPFactor.self)
        return (factor.factor.id, try TOTP(secret: try #require(Base32.decode(factor.secret))))
    }
}
