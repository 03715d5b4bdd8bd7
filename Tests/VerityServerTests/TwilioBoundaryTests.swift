import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Where the Twilio face stops: who may call which route, what an unknown route answers, and what deleting a service
/// takes with it.
@Suite("Twilio Verify face: boundaries")
struct TwilioBoundaryTests {
    let identity = "user-0001-abcd"
    let phone = "+14155552001"

    @Test(
        "A phone's device JWT is 401 20003 on every route of the customer's backend, and changes nothing",
        arguments: TestEngine.available)
    func deviceOnBackendRoutes(engine: TestEngine) async throws {
        try await TestNode.withTwilioDevice(engine, identity: identity) { node, auth, client, service, device in
            let verification = try await client.twilioStart(phone, service: service, auth: auth)
            let webhook = try #require(
                try await client.twilio(
                    .post, "/Services/\(service)/Webhooks", auth: auth,
                    form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": "http://127.0.0.1:9/events"]
                ).json()["sid"] as? String)
            let token = try #require(
                try await client.twilio(
                    .post, "/Services/\(service)/AccessTokens", auth: auth,
                    form: ["Identity": identity, "FactorType": "push"]
                ).json()["sid"] as? String)
            let challenge = try #require(
                try await client.twilio(
                    .post, device.path("/Challenges"), auth: auth,
                    form: ["FactorSid": device.factorSid, "Details.Message": "Approve?"]
                ).json()["sid"] as? String)
            // The start's SMS is delivered by the worker, asynchronously: count from after it.
            try await node.sender.waitForMessages(to: phone)
            let sent = node.sender.messages().count

            let base = "/Services/\(service)"
            let backendOnly: [(HTTPRequest.Method, String, [String: String]?)] = [
                (.get, "/Services", nil), (.post, "/Services", ["FriendlyName": "Mine"]),
                (.get, base, nil), (.post, base, ["FriendlyName": "Mine"]), (.delete, base, nil),
                (.post, base + "/Verifications", ["To": "+14155552002", "Channel": "sms"]),
                (.get, base + "/Verifications/\(verification)", nil),
                (.post, base + "/Verifications/\(verification)", ["Status": "canceled"]),
                (.post, base + "/Verifications/\(verification)", ["Status": "approved"]),
                (.post, base + "/VerificationCheck", ["To": phone, "Code": "123456"]),
                (.get, base + "/Webhooks", nil),
                (.post, base + "/Webhooks", ["FriendlyName": "x", "EventTypes": "*", "WebhookUrl": "http://h/"]),
                (.get, base + "/Webhooks/\(webhook)", nil),
                (.post, base + "/Webhooks/\(webhook)", ["Status": "disabled"]),
                (.delete, base + "/Webhooks/\(webhook)", nil),
                (.post, base + "/AccessTokens", ["Identity": identity, "FactorType": "push"]),
                (.get, base + "/AccessTokens/\(token)", nil),
                (.get, base + "/Entities", nil), (.post, base + "/Entities", ["Identity": "user-0002-abcd"]),
                (.get, base + "/Entities/\(identity)", nil), (.delete, base + "/Entities/\(identity)", nil),
                (.post, device.path("/Factors"), ["FriendlyName": "x", "FactorType": "totp"]),
                (.post, device.path("/Challenges"), ["FactorSid": device.factorSid, "Details.Message": "Mine"]),
                (.post, device.path("/Challenges/\(challenge)/Notifications"), [:]),
            ]
            for (method, path, form) in backendOnly {
                let response = try await client.twilio(method, path, auth: device.auth(), form: form)
                try response.expectTwilioError(401, code: 20003, message: "Authenticate")
                #expect(response.headers[.date] != nil, "\(method) \(path)")
            }
            // Nothing of the above happened.
            #expect(node.sender.messages().count == sent)
            let pending = try await client.twilio(.get, base + "/Verifications/\(verification)", auth: auth)
            #expect(try pending.json()["status"] as? String == "pending")
            #expect(
                try await client.twilio(.get, base + "/Webhooks/\(webhook)", auth: auth).json()["status"] as? String
                    == "enabled")
            let services = try await client.twilio(.get, "/Services", auth: auth)
            #expect(try (services.json()["services"] as? [Any])?.count == 1)
            let challenges = try await client.twilio(.get, device.path("/Challenges"), auth: auth)
            #expect(try (challenges.json()["challenges"] as? [Any])?.count == 1)
            // The device's own routes still work.
            #expect(
                try await client.twilio(.get, device.path("/Factors/\(device.factorSid)"), auth: device.auth()).status
                    == .ok)
            #expect(
                try await client.twilio(.get, device.path("/Challenges/\(challenge)"), auth: device.auth()).status
                    == .ok)
        }
    }

    @Test("A native Verity push factor's key does not sign in to the Twilio face", arguments: TestEngine.available)
    func nativeFactorRefused(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let native = try await TestDevice.enrolled(userId: identity, node: node, client: client)
            let now = Int(node.clock.now().timeIntervalSince1970)
            let claims = try JSONSerialization.data(
                withJSONObject: ["sub": auth.accountSid, "nbf": now, "exp": now + 600], options: [.sortedKeys])
            let credentialSid: String = try #require(TwilioSID.sid("CR", verityId: native.factorId))
            let jwt = try CompactJWS.sign(
                payload: Array(claims), keyID: credentialSid,
                contentType: DeviceTokenDialect.twilio.contentType, using: native.key)
            let deviceAuth = TwilioAuth(accountSid: "token", secret: jwt)
            let factorSid = try #require(TwilioSID.sid("YF", verityId: native.factorId))
            let entity = "/Services/\(service)/Entities/\(identity)"
            for path in [entity + "/Factors/\(factorSid)", entity + "/Factors", entity + "/Challenges"] {
                try await client.twilio(.get, path, auth: deviceAuth).expectTwilioError(401, code: 20003)
            }
            try await client.twilio(.delete, entity + "/Factors/\(factorSid)", auth: deviceAuth)
                .expectTwilioError(401, code: 20003)
            // The native factor is untouched.
            #expect(try await client.send(.get, "/v1/factors/\(native.factorId)", key: node.apiKey).status == .ok)
        }
    }

    @Test("Unknown paths under the prefix are 404 20404, a wrong method 405 20004; the native API keeps its own 404")
    func unmatchedRoutes() async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            try await client.twilio(.get, "/Services/\(service)/RateLimits", auth: auth).expectTwilioError(
                404, code: 20404, message: "The requested resource /Services/\(service)/RateLimits was not found")
            try await client.twilio(.post, "/Services/\(service)/RateLimits", auth: auth, form: ["UniqueName": "x"])
                .expectTwilioError(404, code: 20404)
            for path in ["/Nope", "/Services/\(service)/Entities/\(identity)/Factors/x/y", "/services"] {
                try await client.twilio(.get, path, auth: auth).expectTwilioError(404, code: 20404)
            }
            try await client.twilio(.get, "/twilio/v2", auth: auth, absolute: true).expectTwilioError(404, code: 20404)
            try await client.twilio(.get, "/twilio/v2/", auth: auth, absolute: true).expectTwilioError(404, code: 20404)
            try await client.twilio(.get, "/Nope", auth: nil).expectTwilioError(404, code: 20404)
            let wrongMethods: [(HTTPRequest.Method, String)] = [
                (.delete, "/Services/\(service)/Verifications"), (.put, "/Services"), (.patch, "/Services/\(service)"),
                (.get, "/Services/\(service)/VerificationCheck"),
                (.delete, "/Services/\(service)/Entities/\(identity)/Challenges"),
            ]
            for (method, path) in wrongMethods {
                try await client.twilio(method, path, auth: auth).expectTwilioError(
                    405, code: 20004, message: "Method not allowed")
            }
            let native = try await client.execute(uri: "/v1/nope", method: .get)
            #expect(native.status == .notFound)
            #expect(native.headers[.contentType] == "application/problem+json")
        }
        let root = try await TestNode.make(.sqlite, configure: { $0.twilioVerifyPrefix = "" })
        try await root.run { client in
            try await client.twilio(.get, "/v2/Nope", auth: try root.twilioAuth(), absolute: true)
                .expectTwilioError(404, code: 20404, message: "The requested resource /Nope was not found")
            let native = try await client.execute(uri: "/v1/nope", method: .get)
            #expect(native.headers[.contentType] == "application/problem+json")
        }
    }

    @Test(
        "Deleting a service deletes its factors (and the Verity factors behind them), access tokens and entities",
        arguments: TestEngine.available)
    func serviceDeletion(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let kept = try await client.twilioService(auth: auth)
            let device = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client)
            let other = try await TwilioTestDevice.enroll(
                "user-0002-abcd", service: kept, auth: auth, node: node, client: client)
            let totp = try await client.twilio(
                .post, device.path("/Factors"), auth: auth, form: ["FriendlyName": "Jane", "FactorType": "totp"])
            let totpSid = try #require(try totp.json()["sid"] as? String)
            let unused = try #require(
                try await client.twilio(
                    .post, "/Services/\(service)/AccessTokens", auth: auth,
                    form: ["Identity": "user-0003-abcd", "FactorType": "push"]
                ).json()["token"] as? String)
            let challenge = try #require(
                try await client.twilio(
                    .post, device.path("/Challenges"), auth: auth,
                    form: ["FactorSid": device.factorSid, "Details.Message": "Approve?"]
                ).json()["sid"] as? String)

            #expect(try await client.twilio(.delete, "/Services/\(service)", auth: auth).status == .noContent)

            // The phone's key no longer signs in, here or on the native device API.
            try await client.twilio(.get, device.path("/Factors/\(device.factorSid)"), auth: device.auth())
                .expectTwilioError(401, code: 20003)
            for sid in [device.factorSid, totpSid] {
                let id = try #require(TwilioSID.verityId(sid, prefix: "YF", idPrefix: "fac"))
                #expect(try await client.send(.get, "/v1/factors/\(id)", key: node.apiKey).status == .notFound)
            }
            let factors = try await client.send(.get, "/v1/users/\(identity)/factors", key: node.apiKey)
            #expect(try factors.decode(Page<Factor>.self).items.isEmpty)
            // Its pending challenge can no longer be approved.
            let challengeId = try #require(TwilioSID.verityId(challenge, prefix: "YC", idPrefix: "chl"))
            let fetched = try await client.send(.get, "/v1/challenges/\(challengeId)", key: node.apiKey)
            #expect(try fetched.decode(Challenge.self).status == .expired)
            // An access token it issued enrolls nothing.
            var form = TwilioTestDevice(
                identity: "user-0003-abcd", service: service, accountSid: auth.accountSid, clock: node.clock
            ).enrollmentForm
            form["FriendlyName"] = "Late"
            try await client.twilio(
                .post, "/Services/\(service)/Entities/user-0003-abcd/Factors",
                auth: TwilioAuth(accountSid: "token", secret: unused), form: form
            ).expectTwilioError(401, code: 20003)
            // The other service's factor is untouched.
            #expect(
                try await client.twilio(.get, other.path("/Factors/\(other.factorSid)"), auth: other.auth()).status
                    == .ok)
            let left = try await node.verity.database.execute { sql in
                try await sql.raw(
                    """
                    SELECT (SELECT COUNT(*) FROM twilio_factors WHERE service_sid = \(bind: service))
                         + (SELECT COUNT(*) FROM twilio_access_tokens WHERE service_sid = \(bind: service))
                         + (SELECT COUNT(*) FROM twilio_entities WHERE service_sid = \(bind: service)) AS left_over
                    """
                ).first()?.decode(column: "left_over", as: Int.self)
            }
            #expect(left == 0)
        }
    }
}
