import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import VerityCore

@testable import VerityServer

/// The rules the Twilio push face used to hold itself, now in the Domain with Twilio's differences named in
/// ``FactorDialect/twilio``: each seen on every face that has it.
@Suite("Twilio push rules live in the Domain")
struct TwilioPushRulesTests {
    let identity = "user-0042-rule"

    @Test("Enrollment lifetimes and user ids: Twilio's Ttl 60-300 (60 by default) and Identity 8-64; native 60-3600")
    func enrollmentRules() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, service, _ in
            let tokens = "/Services/\(service)/AccessTokens"
            for ttl in ["59", "301", "ten"] {
                let refused = try await client.twilio(
                    .post, tokens, auth: auth, form: ["Identity": identity, "FactorType": "push", "Ttl": ttl])
                #expect(refused.status == .badRequest)
                #expect(try refused.json()["code"] as? Int == 60200)
            }
            let standard = try await client.twilio(
                .post, tokens, auth: auth, form: ["Identity": identity, "FactorType": "push"])
            #expect(try standard.json()["ttl"] as? Int == 60)
            for bad in ["short", String(repeating: "a", count: 65), "user_0042_rule"] {
                let refused = try await client.twilio(
                    .post, tokens, auth: auth, form: ["Identity": bad, "FactorType": "push"])
                #expect(try refused.json()["code"] as? Int == 60200)
                let entity = try await client.twilio(
                    .post, "/Services/\(service)/Entities", auth: auth, form: ["Identity": bad])
                #expect(try entity.json()["code"] as? Int == 60200)
            }

            for body in [
                #"{"userId":"user-1","expiresIn":59}"#, #"{"userId":"user-1","expiresIn":3601}"#,
                #"{"userId":"\#(String(repeating: "u", count: 129))"}"#,
            ] {
                let refused = try await client.send(.post, "/v1/enrollment-tokens", key: node.apiKey, json: body)
                #expect(refused.status == .badRequest)
                #expect(try refused.problem().code == "invalid_request")
            }
            let native = try await client.send(
                .post, "/v1/enrollment-tokens", key: node.apiKey, json: #"{"userId":"user-1","expiresIn":3600}"#)
            #expect(native.status == .created)
        }
    }

    @Test("Challenge lifetimes: 300 seconds by default and at most 3600, on the Twilio face and the native API")
    func challengeLifetimes() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, _, device in
            let created = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: ["FactorSid": device.factorSid, "Details.Message": "Sign in?"])
            #expect(try created.json()["expiration_date"] as? String == (node.clock.now() + 300).formatted(.iso8601))
            let late = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: [
                    "FactorSid": device.factorSid, "Details.Message": "Sign in?",
                    "ExpirationDate": (node.clock.now() + 3601).formatted(.iso8601),
                ])
            #expect(late.status == .badRequest)
            #expect(try late.json()["code"] as? Int == 60200)

            let native = try await TestDevice.enrolled(node: node, client: client)
            let standard = try await client.createChallenge(
                #"{"factorId":"\#(native.factorId)"}"#, key: node.apiKey
            ).decode(Challenge.self)
            #expect(standard.expiresAt == node.clock.now() + 300)
            let tooLong = try await client.createChallenge(
                #"{"factorId":"\#(native.factorId)","expiresIn":3601}"#, key: node.apiKey)
            #expect(tooLong.status == .badRequest)
            #expect(try tooLong.problem().code == "invalid_request")
        }
    }

    /// One rule each, in Twilio's words and limits on the Twilio face (FriendlyName 1-64, Config.Skew 0-2) and in
    /// Verity's on the native API (friendlyName 1-100); on both a friendly name is trimmed and one line.
    @Test("Friendly names, push tokens and TOTP settings: Twilio's names and limits on its face, Verity's natively")
    func factorSettings() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, service, device in
            let long = String(repeating: "n", count: 65)
            func refused(_ path: String, _ auth: TwilioAuth, _ form: [String: String], naming field: String)
                async throws
            {
                let response = try await client.twilio(.post, path, auth: auth, form: form)
                #expect(response.status == .badRequest, "\(form)")
                let error = try response.json()
                #expect(error["code"] as? Int == 60200)
                #expect((error["message"] as? String)?.contains("`\(field)`") == true, "\(error)")
            }
            let totp = ["FactorType": "totp"]
            for (name, form) in [
                ("FriendlyName", ["FriendlyName": long]), ("FriendlyName", ["FriendlyName": "two\nlines"]),
                ("Config.Skew", ["FriendlyName": "Ada", "Config.Skew": "3"]),
                ("Config.CodeLength", ["FriendlyName": "Ada", "Config.CodeLength": "9"]),
                ("Config.TimeStep", ["FriendlyName": "Ada", "Config.TimeStep": "61"]),
            ] {
                try await refused(device.path("/Factors"), auth, form.merging(totp) { $1 }, naming: name)
            }
            let factor = device.path("/Factors/\(device.factorSid)")
            try await refused(factor, try device.auth(), ["FriendlyName": long], naming: "FriendlyName")
            try await refused(
                factor, try device.auth(), ["Config.NotificationToken": String(repeating: "t", count: 4097)],
                naming: "Config.NotificationToken")
            try await refused(
                "/Services/\(service)/AccessTokens", auth,
                ["Identity": identity, "FactorType": "push", "FactorFriendlyName": long], naming: "FactorFriendlyName")

            let renamed = try await client.twilio(
                .post, factor, auth: try device.auth(), form: ["FriendlyName": " \(String(long.dropFirst())) "])
            #expect(try renamed.json()["friendly_name"] as? String == String(long.dropFirst()))
            let created = try await client.twilio(
                .post, device.path("/Factors"), auth: auth,
                form: ["FactorType": "totp", "FriendlyName": "Ada", "Config.Skew": "2", "Config.TimeStep": "20"])
            #expect(created.status == .created)
            let config = try #require(try created.json()["config"] as? [String: Any])
            #expect(config["skew"] as? Int == 2 && config["time_step"] as? Int == 20)

            let native = try await TestDevice.enrolled(node: node, client: client)
            for body in [
                #"{"friendlyName":"\#(String(repeating: "n", count: 101))"}"#, #"{"friendlyName":"two\nlines"}"#,
                #"{"pushToken":"\#(String(repeating: "t", count: 4097))"}"#,
            ] {
                let response = try await client.send(
                    .patch, "/v1/device/factors/\(native.factorId)", key: try native.token(), json: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(try response.problem().code == "invalid_request")
            }
            let named = try await client.send(
                .patch, "/v1/device/factors/\(native.factorId)", key: try native.token(),
                json: #"{"friendlyName":" \#(String(repeating: "n", count: 100)) "}"#)
            #expect(try named.decode(Factor.self).friendlyName == String(repeating: "n", count: 100))
            let lines = try await client.send(
                .post, "/v1/users/user-1/factors/totp", key: node.apiKey, json: #"{"friendlyName":"two\nlines"}"#)
            #expect(try lines.problem().code == "invalid_request")
        }
    }

    @Test(
        "A notification's Ttl, 0 to 300 seconds and 300 by default, bounds its push's delivery, as does the challenge")
    func notificationLifetime() async throws {
        let platform = [
            "Config.NotificationPlatform": "apn", "Config.NotificationToken": String(repeating: "ab", count: 32),
        ]
        try await TestNode.withTwilioDevice(.sqlite, identity: identity, extra: platform) {
            node, auth, client, _, device in
            let created = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: [
                    "FactorSid": device.factorSid, "Details.Message": "Sign in?",
                    "ExpirationDate": (node.clock.now() + 1200).formatted(.iso8601),
                ])
            let sid = try #require(try created.json()["sid"] as? String)
            try await waitUntil { node.sender.pushes.count == 1 }
            let now = Int(node.clock.now().timeIntervalSince1970)
            #expect(node.sender.pushes[0].expiresAt == now + 1200)

            let notifications = device.path("/Challenges/\(sid)/Notifications")
            for ttl in ["301", "-1", "soon"] {
                let refused = try await client.twilio(.post, notifications, auth: auth, form: ["Ttl": ttl])
                #expect(refused.status == .badRequest, "\(ttl)")
                #expect(try refused.json()["code"] as? Int == 60200)
            }
            for (form, ttl, lifetime) in [([:], 300, 300), (["Ttl": "60"], 60, 60), (["Ttl": "0"], 0, 1)] {
                let count = node.sender.pushes.count
                let sent = try await client.twilio(.post, notifications, auth: auth, form: form)
                #expect(sent.status == .created)
                #expect(try sent.json()["ttl"] as? Int == ttl)
                try await waitUntil { node.sender.pushes.count == count + 1 }
                #expect(node.sender.pushes.last?.expiresAt == now + lifetime, "\(form)")
            }
            node.clock.advance(by: 1100)
            _ = try await client.twilio(.post, notifications, auth: auth, form: [:])
            try await waitUntil { node.sender.pushes.count == 5 }
            #expect(node.sender.pushes.last?.expiresAt == now + 1200)
        }
    }

    @Test("An enrollment token has one shape, checked before any lookup: a Twilio access token and a native bearer")
    func enrollmentTokenShape() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, service, device in
            let issued = try await client.twilio(
                .post, "/Services/\(service)/AccessTokens", auth: auth,
                form: ["Identity": identity, "FactorType": "push"])
            let token = try #require(try issued.json()["token"] as? String)
            #expect(token.hasPrefix(FactorService.enrollmentTokenPrefix))
            for bad in [token.uppercased(), token + String(repeating: "a", count: 100), "vk_" + token.dropFirst(4)] {
                try await client.twilio(
                    .post, device.path("/Factors"), auth: TwilioAuth(accountSid: "token", secret: bad),
                    form: device.enrollmentForm
                ).expectTwilioError(401, code: 20003)
                let native = try await client.send(
                    .post, "/v1/device/factors", key: bad, json: #"{"publicKey":"x","friendlyName":"Phone"}"#)
                #expect(native.status == .unauthorized)
                #expect(try native.problem().detail == "Send the enrollment token as `Authorization: Bearer vet_…`.")
            }
            let enrolled = try await client.twilio(
                .post, device.path("/Factors"), auth: TwilioAuth(accountSid: "token", secret: token),
                form: device.enrollmentForm)
            #expect(enrolled.status == .created)
        }
    }

    @Test("A Twilio answer over 5456 characters, or leaving out a signed field, is 403 60324; the challenge waits")
    func answerShape() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, _, device in
            let created = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: ["FactorSid": device.factorSid, "Details.Message": "Sign in?"])
            let sid = try #require(try created.json()["sid"] as? String)
            let fetched = try await client.twilio(.get, device.path("/Challenges/\(sid)"), auth: device.auth())
            let fields = FactorDialect.twilio.answerFields.joined(separator: ",")
            var claims = try device.claims(try fetched.json(), fields: fields, status: "approved")
            // A valid signature over every field, padded past Twilio's longest AuthPayload with an extra claim.
            claims["padding"] = String(repeating: "p", count: 5456)
            let long = try device.sign(claims)
            claims["padding"] = nil
            claims["hidden_details"] = nil
            let partial = try device.sign(claims)
            for payload in [long, partial] {
                let refused = try await client.twilio(
                    .post, device.path("/Challenges/\(sid)"), auth: device.auth(), form: ["AuthPayload": payload])
                #expect(refused.status == .forbidden)
                #expect(try refused.json()["code"] as? Int == 60324)
            }
            let after = try await client.twilio(.get, device.path("/Challenges/\(sid)"), auth: auth)
            #expect(try after.json()["status"] as? String == "pending")
            #expect(try await device.answer(sid, "approved", client: client).status == .ok)
        }
    }

    @Test(
        "Deleting a Twilio service is one unit of work: a failure injected at its last step leaves it all in place",
        arguments: TestEngine.available)
    func serviceDeletionIsAtomic(engine: TestEngine) async throws {
        try await TestNode.withTwilioDevice(engine, identity: identity) { node, auth, client, service, device in
            let token = try await client.twilio(
                .post, "/Services/\(service)/AccessTokens", auth: auth,
                form: ["Identity": identity, "FactorType": "push"])
            let tokenSid = try #require(try token.json()["sid"] as? String)
            try await node.injectFailure(of: "DELETE", on: "enrollment_tokens", engine: engine)
            let failed = try await client.twilio(.delete, "/Services/\(service)", auth: auth)
            #expect(failed.status.code >= 500)
            #expect(try await client.twilio(.get, "/Services/\(service)", auth: auth).status == .ok)
            #expect(try await client.twilio(.get, device.path(""), auth: auth).status == .ok)
            let factor = try await client.twilio(.get, device.path("/Factors/\(device.factorSid)"), auth: device.auth())
            #expect(try factor.json()["status"] as? String == "verified")
            let kept = try await client.twilio(.get, "/Services/\(service)/AccessTokens/\(tokenSid)", auth: auth)
            #expect(kept.status == .ok)

            try await node.removeInjectedFailure(on: "enrollment_tokens", engine: engine)
            #expect(try await client.twilio(.delete, "/Services/\(service)", auth: auth).status == .noContent)
            let gone = try await client.twilio(.get, device.path("/Factors/\(device.factorSid)"), auth: device.auth())
            #expect(gone.status == .unauthorized)
        }
    }
}
