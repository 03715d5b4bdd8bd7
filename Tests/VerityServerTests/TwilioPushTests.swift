import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

@Suite("Twilio Verify face: Verify Push and TOTP")
struct TwilioPushTests {
    let identity = "user-0001-abcd"

    @Test("Entities: create (again is the same one), fetch, list, delete; a bad identity is 60200")
    func entities() async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let created = try await client.twilio(
                .post, "/Services/\(service)/Entities", auth: auth, form: ["Identity": identity])
            #expect(created.status == .created)
            let entity = try created.json()
            let sid = try #require(entity["sid"] as? String)
            #expect(TwilioSID.isValid(sid, prefix: "YE"))
            #expect(entity["identity"] as? String == identity && entity["service_sid"] as? String == service)
            let again = try await client.twilio(
                .post, "/Services/\(service)/Entities", auth: auth, form: ["Identity": identity])
            #expect(try again.json()["sid"] as? String == sid)
            let listed = try await client.twilio(.get, "/Services/\(service)/Entities", auth: auth)
            #expect(try listed.json()["entities"] as? [[String: Any]] != nil)
            #expect(
                try await client.twilio(.get, "/Services/\(service)/Entities/\(identity)", auth: auth).status == .ok)
            for bad in ["short", "has space in it", String(repeating: "a", count: 65)] {
                let refused = try await client.twilio(
                    .post, "/Services/\(service)/Entities", auth: auth, form: ["Identity": bad])
                #expect(refused.status == .badRequest)
                #expect(try refused.json()["code"] as? Int == 60200)
            }
            let deleted = try await client.twilio(.delete, "/Services/\(service)/Entities/\(identity)", auth: auth)
            #expect(deleted.status == .noContent)
            let gone = try await client.twilio(.get, "/Services/\(service)/Entities/\(identity)", auth: auth)
            #expect(gone.status == .notFound)
            #expect(try gone.json()["code"] as? Int == 20404)
        }
    }

    @Test(
        "Push: access token, enrollment, DER proof, challenge, signed approval; replay 60322, tampering 60324",
        arguments: TestEngine.available)
    func pushApproval(engine: TestEngine) async throws {
        try await TestNode.withTwilioDevice(engine, identity: identity) { node, auth, client, service, device in

            // The access token enrolled one device: it is spent.
            let reuse = try await client.twilio(
                .post, device.path("/Factors"), auth: TwilioAuth(accountSid: "token", secret: device.accessToken),
                form: device.enrollmentForm)
            #expect(reuse.status == .unauthorized)

            let created = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: [
                    "FactorSid": device.factorSid, "Details.Message": "Approve sign-in?",
                    "Details.Fields": #"{"label":"IP","value":"203.0.113.7"}"#,
                    "HiddenDetails": #"{"ipAddress":"203.0.113.7"}"#,
                ])
            #expect(created.status == .created)
            let challenge = try created.json()
            let challengeSid = try #require(challenge["sid"] as? String)
            #expect(TwilioSID.isValid(challengeSid, prefix: "YC"))
            #expect(challenge["status"] as? String == "pending")
            // A customer's keys keep their case.
            #expect(challenge["hidden_details"] as? [String: String] == ["ipAddress": "203.0.113.7"])

            let fetched = try await client.twilio(.get, device.path("/Challenges/\(challengeSid)"), auth: device.auth())
            #expect(fetched.status == .ok)
            let header = try #require(HTTPFields.Element.Name("Twilio-Verify-Signature-Fields"))
            let fields = try #require(fetched.headers[header])
            #expect(fields == FactorDialect.twilio.answerFields.joined(separator: ","))
            let body = try fetched.json()

            // Claims that differ from what the server holds, or a signature by another key: 60324.
            var altered = try device.claims(body, fields: fields, status: "approved")
            altered["details"] = ["message": "Something else"]
            let tampered = try await client.twilio(
                .post, device.path("/Challenges/\(challengeSid)"), auth: device.auth(),
                form: ["AuthPayload": try device.sign(altered)])
            #expect(tampered.status == .forbidden)
            #expect(try tampered.json()["code"] as? Int == 60324)
            let foreign = try await client.twilio(
                .post, device.path("/Challenges/\(challengeSid)"), auth: device.auth(),
                form: [
                    "AuthPayload": try device.sign(
                        try device.claims(body, fields: fields, status: "approved"), key: P256.Signing.PrivateKey())
                ])
            #expect(try foreign.json()["code"] as? Int == 60324)

            let answer = try device.sign(try device.claims(body, fields: fields, status: "approved"))
            let approved = try await client.twilio(
                .post, device.path("/Challenges/\(challengeSid)"), auth: device.auth(), form: ["AuthPayload": answer])
            #expect(approved.status == .ok)
            #expect(try approved.json()["status"] as? String == "approved")
            let replay = try await client.twilio(
                .post, device.path("/Challenges/\(challengeSid)"), auth: device.auth(), form: ["AuthPayload": answer])
            #expect(replay.status == .forbidden)
            #expect(try replay.json()["code"] as? Int == 60322)

            let backend = try await client.twilio(.get, device.path("/Challenges/\(challengeSid)"), auth: auth)
            #expect(try backend.json()["status"] as? String == "approved")
            // Only a pending challenge can be answered, so only a pending one names the fields to sign.
            #expect(backend.headers[header] == nil)
            #expect(try backend.json()["date_responded"] as? String == "2027-01-15T08:00:00Z")
        }
    }

    @Test("Device JWTs: tampered, foreign key, expired, too long, wrong account or kid are 401 20003 with Date")
    func deviceAuthentication() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, service, device in
            let path = device.path("/Factors/\(device.factorSid)")
            #expect(try await client.twilio(.get, path, auth: device.auth()).status == .ok)

            let valid = try device.jwt()
            let parts = valid.split(separator: ".")
            let forgedClaims = Base64URL.encode(Array(#"{"exp":9999999999,"nbf":0,"sub":"\#(auth.accountSid)"}"#.utf8))
            let now = Int(node.clock.now().timeIntervalSince1970)
            let refused = [
                "\(parts[0]).\(forgedClaims).\(parts[2])",
                try device.jwt(key: P256.Signing.PrivateKey()),
                try device.jwt(nbf: now - 1300),
                try device.jwt(lifetime: 3600),
                try device.jwt(sub: "AC" + String(repeating: "0", count: 32)),
                try device.jwt(kid: "CR" + String(repeating: "0", count: 32)),
                try device.jwt(contentType: nil),
            ]
            for token in refused {
                let response = try await client.twilio(.get, path, auth: TwilioAuth(accountSid: "token", secret: token))
                #expect(response.status == .unauthorized)
                #expect(try response.json()["code"] as? Int == 20003)
                #expect(response.headers[.date]?.hasSuffix(" GMT") == true)
            }
            // A device may not call the backend's routes.
            let entity = try await client.twilio(.get, "/Services/\(service)/Entities/\(identity)", auth: device.auth())
            #expect(entity.status == .unauthorized)
        }
    }

    @Test(
        "TOTP: secret and URI once, 60311 on a wrong code, 60310 after five, challenges answered by code",
        arguments: TestEngine.available)
    func totp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let base = "/Services/\(service)/Entities/\(identity)"
            let created = try await client.twilio(
                .post, base + "/Factors", auth: auth,
                form: ["FriendlyName": "Jane", "FactorType": "totp", "Config.TimeStep": "60"])
            #expect(created.status == .created)
            let factor = try created.json()
            let sid = try #require(factor["sid"] as? String)
            let binding = try #require(factor["binding"] as? [String: String])
            let secret = try #require(binding["secret"].flatMap(Base32.decode))
            #expect(binding["uri"]?.hasPrefix("otpauth://totp/") == true)
            #expect((factor["config"] as? [String: Any])?["time_step"] as? Int == 60)
            let fetched = try await client.twilio(.get, base + "/Factors/\(sid)", auth: auth)
            #expect(try fetched.json()["binding"] is NSNull)

            let totp = try TOTP(secret: secret, digits: 6, period: 60)
            let right = totp.code(at: node.clock.now())
            let wrong = String(format: "%06d", (try #require(Int(right)) + 1) % 1_000_000)
            for attempt in 1...5 {
                let response = try await client.twilio(
                    .post, base + "/Factors/\(sid)", auth: auth, form: ["AuthPayload": wrong])
                #expect(response.status == (attempt < 5 ? .forbidden : .tooManyRequests))
                #expect(try response.json()["code"] as? Int == (attempt < 5 ? 60311 : 60310))
            }
            let locked = try await client.twilio(
                .post, base + "/Factors/\(sid)", auth: auth, form: ["AuthPayload": right])
            #expect(try locked.json()["code"] as? Int == 60310)

            // A second factor, verified, answers a challenge by its code.
            let second = try await client.twilio(
                .post, base + "/Factors", auth: auth, form: ["FriendlyName": "Jane 2", "FactorType": "totp"])
            let secondSid = try #require(try second.json()["sid"] as? String)
            let secondSecret = try #require(
                ((try second.json()["binding"] as? [String: String])?["secret"]).flatMap(Base32.decode))
            let secondTOTP = try TOTP(secret: secondSecret)
            let unverified = try await client.twilio(
                .post, base + "/Challenges", auth: auth,
                form: ["FactorSid": secondSid, "AuthPayload": secondTOTP.code(at: node.clock.now())])
            #expect(try unverified.json()["code"] as? Int == 60318)
            let verified = try await client.twilio(
                .post, base + "/Factors/\(secondSid)", auth: auth,
                form: ["AuthPayload": secondTOTP.code(at: node.clock.now())])
            #expect(try verified.json()["status"] as? String == "verified")
            node.clock.advance(by: 30)
            let challenge = try await client.twilio(
                .post, base + "/Challenges", auth: auth,
                form: ["FactorSid": secondSid, "AuthPayload": secondTOTP.code(at: node.clock.now())])
            #expect(challenge.status == .created)
            #expect(try challenge.json()["status"] as? String == "approved")
            #expect(try challenge.json()["factor_type"] as? String == "totp")
        }
    }

    @Test("Challenges: expiry 60323, status filter, Order=desc and page tokens that keep the filters")
    func challengeLists() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, service, device in
            var sids: [String] = []
            for index in 0..<3 {
                node.clock.advance(by: 1)
                let created = try await client.twilio(
                    .post, device.path("/Challenges"), auth: auth,
                    form: [
                        "FactorSid": device.factorSid, "Details.Message": "Approve #\(index)",
                        "ExpirationDate": (node.clock.now() + 60).formatted(.iso8601),
                    ])
                sids.append(try #require(try created.json()["sid"] as? String))
            }
            var seen: [String] = []
            var next: String? = "/twilio/v2" + device.path("/Challenges?Order=desc&PageSize=2")
            while let url = next {
                let page = try await client.twilio(.get, url, auth: device.auth(), absolute: true)
                let body = try page.json()
                seen += try #require(body["challenges"] as? [[String: Any]]).compactMap { $0["sid"] as? String }
                next = ((body["meta"] as? [String: Any])?["next_page_url"] as? String).map {
                    #expect($0.contains("Order=desc"))
                    return String($0.dropFirst("http://127.0.0.1:8080".count))
                }
            }
            #expect(seen == sids.reversed())

            node.clock.advance(by: 120)
            let expired = try await client.twilio(.get, device.path("/Challenges?Status=expired"), auth: auth)
            #expect(try (expired.json()["challenges"] as? [[String: Any]])?.count == 3)
            let late = try await device.answer(sids[0], "approved", client: client)
            #expect(try late.json()["code"] as? Int == 60323)
            let notify = try await client.twilio(
                .post, device.path("/Challenges/\(sids[0])/Notifications"), auth: auth, form: [:])
            #expect(try notify.json()["code"] as? Int == 60323)
        }
    }
}

extension TwilioPushTests {
    @Test(
        "Webhooks: factor and challenge events queued with their writes, in Twilio's shape",
        arguments: TestEngine.available)
    func webhookEvents(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let hooks = "/Services/\(service)/Webhooks"
            let created = try await client.twilio(
                .post, hooks, auth: auth,
                form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": "http://127.0.0.1:9/events"])
            #expect(created.status == .created)
            let sid = try #require(try created.json()["sid"] as? String)
            #expect(TwilioSID.isValid(sid, prefix: "YW"))
            let bad = try await client.twilio(
                .post, hooks, auth: auth, form: ["FriendlyName": "x", "EventTypes": "nope", "WebhookUrl": "ftp://x"])
            #expect(try bad.json()["code"] as? Int == 60200)
            // The project now has a signing secret for the events.
            #expect(try await node.verity.admin.project(id: node.project.id).webhookSecret?.hasPrefix("whsec_") == true)

            let device = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client)
            let challenge = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: ["FactorSid": device.factorSid, "Details.Message": "Approve?"])
            let challengeSid = try #require(try challenge.json()["sid"] as? String)
            #expect(try await device.answer(challengeSid, "denied", client: client).status == .ok)
            #expect(
                try await client.twilio(.delete, device.path("/Factors/\(device.factorSid)"), auth: auth).status
                    == .noContent)

            let events = try await node.verity.outbox.messages().map(\.message).filter { $0.channel == .twilioWebhook }
                .sorted { $0.createdAt < $1.createdAt }
            let params = try events.map {
                try JSONDecoder().decode([String: String].self, from: Data(($0.payload ?? "").utf8))
            }
            #expect(
                Set(params.compactMap { $0["type"] })
                    == ["factor.created", "factor.verified", "challenge.denied", "factor.deleted"])
            #expect(events.allSatisfy { $0.destination == "http://127.0.0.1:9/events" })
            let denied = try #require(params.first { $0["type"] == "challenge.denied" })
            #expect(denied["challenge_sid"] == challengeSid && denied["status"] == "denied")
            #expect(denied["factor_sid"] == device.factorSid && denied["entity_identity"] == identity)
            #expect(denied["account_sid"] == auth.accountSid && denied["service_sid"] == service)

            #expect(try await client.twilio(.delete, hooks + "/\(sid)", auth: auth).status == .noContent)
            #expect(try await client.twilio(.get, hooks + "/\(sid)", auth: auth).status == .notFound)
        }
    }

    @Test(
        "Create New Factor with account credentials: a push factor bound to the posted key, verified by the device",
        arguments: TestEngine.available)
    func backendCreatesPushFactor(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            var device = TwilioTestDevice(
                identity: identity, service: service, accountSid: auth.accountSid, clock: node.clock)
            let created = try await client.twilio(
                .post, device.path("/Factors"), auth: auth, form: device.enrollmentForm)
            #expect(created.status == .created)
            let factor = try created.json()
            #expect(factor["status"] as? String == "unverified")
            #expect(factor["factor_type"] as? String == "push")
            let binding = try #require(factor["binding"] as? [String: String])
            #expect(binding["public_key"] == device.enrollmentForm["Binding.PublicKey"])
            device.factorSid = try #require(factor["sid"] as? String)
            device.credentialSid = try #require((factor["config"] as? [String: Any])?["credential_sid"] as? String)
            // The device proves its key as after an app's own enrollment, and then answers challenges.
            let proof = try device.key.signature(for: Data(device.factorSid.utf8)).derRepresentation
                .base64EncodedString()
            let verified = try await client.twilio(
                .post, device.path("/Factors/\(device.factorSid)"), auth: device.auth(), form: ["AuthPayload": proof])
            #expect(try verified.json()["status"] as? String == "verified")
            let bad = try await client.twilio(
                .post, device.path("/Factors"), auth: auth, form: ["FriendlyName": "x", "FactorType": "sms"])
            try bad.expectTwilioError(400, code: 60200)
        }
    }

    @Test("ExpirationDate: any time up to 60 minutes ahead, as Twilio documents, 5 seconds included")
    func shortExpiration() async throws {
        try await TestNode.withTwilioDevice(.sqlite, identity: identity) { node, auth, client, _, device in
            let created = try await client.twilio(
                .post, device.path("/Challenges"), auth: auth,
                form: [
                    "FactorSid": device.factorSid, "Details.Message": "Quick?",
                    "ExpirationDate": (node.clock.now() + 5).formatted(.iso8601),
                ])
            #expect(created.status == .created)
            #expect(try created.json()["expiration_date"] as? String == (node.clock.now() + 5).formatted(.iso8601))
        }
    }

    @Test(
        "Hostile input to the push and TOTP routes is a 4xx Twilio error that changes nothing",
        arguments: TestEngine.available)
    func hostileInput(engine: TestEngine) async throws {
        try await TestNode.withTwilioDevice(engine, identity: identity) { node, auth, client, service, device in
            let challenges = device.path("/Challenges")
            let refused: [(String, [String: String], Int, Int)] = [
                (challenges, ["FactorSid": device.factorSid], 400, 60200),
                (
                    challenges, ["FactorSid": device.factorSid, "Details.Message": "x", "Details.Fields": "{"], 400,
                    60200
                ),
                (
                    challenges, ["FactorSid": device.factorSid, "Details.Message": "x", "HiddenDetails": "[1]"], 400,
                    60200
                ),
                (
                    challenges, ["FactorSid": device.factorSid, "Details.Message": "x", "ExpirationDate": "soon"], 400,
                    60200
                ),
                (
                    challenges,
                    ["FactorSid": device.factorSid, "Details.Message": "x", "ExpirationDate": "2030-01-01T00:00:00Z"],
                    400, 60200
                ),
                (
                    challenges,
                    ["FactorSid": device.factorSid, "Details.Message": "x", "ExpirationDate": "2020-01-01T00:00:00Z"],
                    400, 60200
                ),
                (
                    challenges, ["FactorSid": "YF" + String(repeating: "0", count: 32), "Details.Message": "x"], 404,
                    20404
                ),
                (challenges, ["FactorSid": "not-a-sid", "Details.Message": "x"], 404, 20404),
                (
                    challenges,
                    ["FactorSid": device.factorSid, "Details.Message": String(repeating: "x", count: 300)], 400, 60200
                ),
                (device.path("/Factors"), ["FriendlyName": "x", "FactorType": "sms"], 400, 60200),
                (
                    device.path("/Factors"), ["FriendlyName": "x", "FactorType": "totp", "Config.CodeLength": "3"], 400,
                    60200
                ),
                (
                    device.path("/Factors"), ["FriendlyName": "x", "FactorType": "totp", "Binding.Secret": "!!"], 400,
                    60200
                ),
                ("/Services/\(service)/AccessTokens", ["Identity": identity, "FactorType": "totp"], 400, 60200),
                (
                    "/Services/\(service)/AccessTokens", ["Identity": identity, "FactorType": "push", "Ttl": "9"], 400,
                    60200
                ),
                ("/Services/\(service)/Webhooks", ["FriendlyName": "x", "WebhookUrl": "http://h/"], 400, 60200),
                (device.path("/Challenges/YC\(String(repeating: "0", count: 32))"), ["AuthPayload": "x"], 404, 20404),
            ]
            for (path, form, status, code) in refused {
                try await client.twilio(.post, path, auth: auth, form: form).expectTwilioError(status, code: code)
            }
            // A push factor with a key that is not P-256, from a fresh access token: refused, and nothing stored.
            let token = try await client.twilio(
                .post, "/Services/\(service)/AccessTokens", auth: auth,
                form: ["Identity": "user-0002-abcd", "FactorType": "push"])
            var form = device.enrollmentForm
            form["Binding.PublicKey"] = Data("not a key".utf8).base64EncodedString()
            try await client.twilio(
                .post, "/Services/\(service)/Entities/user-0002-abcd/Factors",
                auth: TwilioAuth(accountSid: "token", secret: try #require(try token.json()["token"] as? String)),
                form: form
            ).expectTwilioError(400, code: 60200)
            try await client.twilio(.get, "/Services/\(service)/Entities/user-0002-abcd", auth: auth)
                .expectTwilioError(404, code: 20404)
            let listed = try await client.twilio(.get, challenges, auth: auth)
            #expect(try (listed.json()["challenges"] as? [[String: Any]])?.isEmpty == true)
            for query in ["Status=maybe", "Order=sideways", "PageToken=PAxyz", "PageSize=0"] {
                try await client.twilio(.get, challenges + "?" + query, auth: auth).expectTwilioError(400, code: 60200)
            }
            #expect(!node.logs.text.contains("Unhandled error"))
        }
    }

    @Test("Pushes for the Twilio face carry the keys Twilio Verify apps read")
    func twilioPushPayloads() throws {
        let challengeId = "chl_" + String(repeating: "0", count: 25) + "4"
        let factorId = "fac_" + String(repeating: "0", count: 25) + "8"
        let notification = PushNotification(
            id: "msg_1", platform: .apns, token: "ab", appId: nil, title: "Acme", body: "Approve sign-in?",
            challengeId: challengeId, factorId: factorId, expiresAt: 0, style: .twilio)
        let apns = try #require(
            try JSONSerialization.jsonObject(with: Data(try APNsPushSender.payload(notification))) as? [String: Any])
        #expect(apns["type"] as? String == "verify_push_challenge")
        #expect(apns["challenge_sid"] as? String == TwilioSID.sid("YC", verityId: challengeId))
        #expect(apns["factor_sid"] as? String == TwilioSID.sid("YF", verityId: factorId))
        #expect(apns["message"] as? String == "Approve sign-in?")
        #expect((apns["aps"] as? [String: Any])?["category"] as? String == "verify_push_challenge")
        #expect(apns["challengeId"] == nil && apns["challenge_sid"] as? String != "")
        let fcm = try #require(
            try JSONSerialization.jsonObject(with: Data(try FCMPushSender.body(notification, ttl: 60)))
                as? [String: Any])
        let data = try #require((fcm["message"] as? [String: Any])?["data"] as? [String: String])
        #expect(data["type"] == "verify_push_challenge" && data["message"] == "Approve sign-in?")
        #expect(data["challenge_sid"] == TwilioSID.sid("YC", verityId: challengeId))
    }

    @Test("X-Twilio-Signature matches twilio-python's RequestValidator")
    func twilioSignature() {
        // RequestValidator("12345").compute_signature(url, params), computed with twilio 9.
        let params = [
            ("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"), ("From", "+12349013030"),
            ("To", "+18005551212"),
        ]
        #expect(
            TwilioWebhookSignature.signature(
                url: "https://mycompany.com/myapp.php?foo=1&bar=2", params: params, key: "12345")
                == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
    }
}

extension TestNode {
    /// Runs `body` with a fresh node, its Twilio credentials, a new service and a push device enrolled in it for
    /// `identity`: where most Verify Push tests start.
    static func withTwilioDevice(
        _ engine: TestEngine, identity: String, extra: [String: String] = [:],
        _ body: @Sendable (TestNode, TwilioAuth, any TestClientProtocol, String, TwilioTestDevice) async throws -> Void
    ) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let device = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client, extra: extra)
            try await body(node, auth, client, service, device)
        }
    }
}

/// A phone speaking the Twilio Verify SDKs' protocol to the face under test.
struct TwilioTestDevice {
    let key = P256.Signing.PrivateKey()
    let identity: String
    let service: String
    let accountSid: String
    let clock: TestClock
    var accessToken = ""
    var factorSid = ""
    var credentialSid = ""

    func path(_ suffix: String) -> String {
        "/Services/\(service)/Entities/\(identity)\(suffix)"
    }

    var enrollmentForm: [String: String] {
        [
            "FriendlyName": "Jane's iPhone", "FactorType": "push",
            "Binding.PublicKey": key.publicKey.derRepresentation.base64EncodedString(), "Binding.Alg": "ES256",
            "Config.SdkVersion": "3.0.0", "Config.AppId": "com.example.acme", "Config.NotificationPlatform": "none",
        ]
    }

    /// An access token from the backend, a factor created with it, and the factor verified by a DER signature over
    /// its SID.
    ///
    /// - Parameter extra: Form values that add to or replace ``enrollmentForm``'s, such as a push platform.
    static func enroll(
        _ identity: String, service: String, auth: TwilioAuth, node: TestNode, client: some TestClientProtocol,
        extra: [String: String] = [:]
    ) async throws -> TwilioTestDevice {
        var device = TwilioTestDevice(
            identity: identity, service: service, accountSid: auth.accountSid, clock: node.clock)
        let token = try await client.twilio(
            .post, "/Services/\(service)/AccessTokens", auth: auth,
            form: ["Identity": identity, "FactorType": "push", "Ttl": "300"])
        #expect(token.status == .created)
        device.accessToken = try #require(try token.json()["token"] as? String)
        let created = try await client.twilio(
            .post, device.path("/Factors"), auth: TwilioAuth(accountSid: "token", secret: device.accessToken),
            form: device.enrollmentForm.merging(extra) { $1 })
        #expect(created.status == .created)
        let factor = try created.json()
        device.factorSid = try #require(factor["sid"] as? String)
        device.credentialSid = try #require((factor["config"] as? [String: Any])?["credential_sid"] as? String)
        #expect(factor["status"] as? String == "unverified")
        let proof = try device.key.signature(for: Data(device.factorSid.utf8)).derRepresentation.base64EncodedString()
        let verified = try await client.twilio(
            .post, device.path("/Factors/\(device.factorSid)"), auth: device.auth(), form: ["AuthPayload": proof])
        #expect(try verified.json()["status"] as? String == "verified")
        return device
    }

    /// A device JWT as the SDKs sign them (no `iat`).
    func jwt(
        key: P256.Signing.PrivateKey? = nil, nbf: Int? = nil, lifetime: Int = 600, sub: String? = nil,
        kid: String? = nil, contentType: String? = DeviceTokenDialect.twilio.contentType
    ) throws -> String {
        let start = nbf ?? Int(clock.now().timeIntervalSince1970)
        let claims = try JSONSerialization.data(
            withJSONObject: ["sub": sub ?? accountSid, "nbf": start, "exp": start + lifetime], options: [.sortedKeys])
        return try CompactJWS.sign(
            payload: Array(claims), keyID: kid ?? credentialSid, contentType: contentType, using: key ?? self.key)
    }

    func auth() throws -> TwilioAuth {
        TwilioAuth(accountSid: "token", secret: try jwt())
    }

    /// The listed fields of the fetched challenge, and the answer.
    func claims(_ body: [String: Any], fields: String, status: String) throws -> [String: Any] {
        var claims = [String: Any]()
        for field in fields.split(separator: ",") { claims[String(field)] = body[String(field)] ?? NSNull() }
        claims["status"] = status
        return claims
    }

    /// Answers as the SDK does: fetch the challenge, sign its listed fields and `status`, post the JWS.
    func answer(_ challengeSid: String, _ status: String, client: some TestClientProtocol) async throws -> TestResponse
    {
        let fetched = try await client.twilio(.get, path("/Challenges/\(challengeSid)"), auth: auth())
        let fields = FactorDialect.twilio.answerFields.joined(separator: ",")
        let signed = try sign(try claims(try fetched.json(), fields: fields, status: status))
        return try await client.twilio(
            .post, path("/Challenges/\(challengeSid)"), auth: auth(), form: ["AuthPayload": signed])
    }

    func sign(_ claims: [String: Any], key: P256.Signing.PrivateKey? = nil) throws -> String {
        try CompactJWS.sign(
            payload: Array(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])), keyID: nil,
            using: key ?? self.key)
    }
}

extension TwilioPushTests {
    /// A verified TOTP factor with `Config.Skew` = `skew` and its code generator.
    private func verifiedTOTP(
        skew: Int, name: String, service: String, auth: TwilioAuth, node: TestNode, client: some TestClientProtocol
    ) async throws -> (sid: String, totp: TOTP) {
        let created = try await client.twilio(
            .post, "/Services/\(service)/Entities/\(identity)/Factors", auth: auth,
            form: ["FriendlyName": name, "FactorType": "totp", "Config.Skew": "\(skew)"])
        #expect(created.status == .created)
        let factor = try created.json()
        #expect((factor["config"] as? [String: Any])?["skew"] as? Int == skew)
        let sid = try #require(factor["sid"] as? String)
        let secret = try #require(((factor["binding"] as? [String: String])?["secret"]).flatMap(Base32.decode))
        let totp = try TOTP(secret: secret)
        let verified = try await client.twilio(
            .post, "/Services/\(service)/Entities/\(identity)/Factors/\(sid)", auth: auth,
            form: ["AuthPayload": totp.code(at: node.clock.now())])
        #expect(try verified.json()["status"] as? String == "verified")
        return (sid, totp)
    }

    @Test(
        "TOTP challenges honour the factor's Config.Skew and send challenge.approved|denied events",
        arguments: TestEngine.available)
    func totpSkewAndEvents(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            #expect(
                try await client.twilio(
                    .post, "/Services/\(service)/Webhooks", auth: auth,
                    form: ["FriendlyName": "Backend", "EventTypes": "*", "WebhookUrl": "http://127.0.0.1:9/events"]
                ).status == .created)
            let wide = try await verifiedTOTP(
                skew: 2, name: "Wide", service: service, auth: auth, node: node, client: client)
            let strict = try await verifiedTOTP(
                skew: 0, name: "Strict", service: service, auth: auth, node: node, client: client)
            let challenges = "/Services/\(service)/Entities/\(identity)/Challenges"
            node.clock.advance(by: 4 * 30)
            // Two steps late: inside a skew of 2 (outside the default 1).
            let late = try await client.twilio(
                .post, challenges, auth: auth,
                form: ["FactorSid": wide.sid, "AuthPayload": wide.totp.code(at: node.clock.now() - 60)])
            #expect(try late.json()["status"] as? String == "approved")
            // One step late: outside a skew of 0 (inside the default 1).
            let strictLate = try await client.twilio(
                .post, challenges, auth: auth,
                form: ["FactorSid": strict.sid, "AuthPayload": strict.totp.code(at: node.clock.now() - 30)])
            #expect(try strictLate.json()["status"] as? String == "denied")
            let strictNow = try await client.twilio(
                .post, challenges, auth: auth,
                form: ["FactorSid": strict.sid, "AuthPayload": strict.totp.code(at: node.clock.now())])
            #expect(try strictNow.json()["status"] as? String == "approved")

            let events = try await node.verity.outbox.messages().map(\.message).filter { $0.channel == .twilioWebhook }
            let params = try events.map {
                try JSONDecoder().decode([String: String].self, from: Data(($0.payload ?? "").utf8))
            }
            let answers = params.filter { $0["type"]?.hasPrefix("challenge.") == true }
            #expect(answers.count == 3)
            let approved = try #require(answers.first { $0["challenge_sid"] == (try? late.json()["sid"] as? String) })
            #expect(approved["type"] == "challenge.approved" && approved["status"] == "approved")
            #expect(approved["factor_type"] == "totp" && approved["factor_sid"] == wide.sid)
            let denied = try #require(
                answers.first { $0["challenge_sid"] == (try? strictLate.json()["sid"] as? String) })
            #expect(denied["type"] == "challenge.denied" && denied["factor_sid"] == strict.sid)
        }
    }

    @Test(
        "Factors list page by page (PageSize, PageToken); a device sees only its own", arguments: TestEngine.available)
    func factorPages(engine: TestEngine) async throws {
        try await TestNode.withTwilioDevice(engine, identity: identity) { node, auth, client, service, device in
            var sids = [device.factorSid]
            for index in 0..<2 {
                node.clock.advance(by: 1)
                let created = try await client.twilio(
                    .post, device.path("/Factors"), auth: auth,
                    form: ["FriendlyName": "T\(index)", "FactorType": "totp"])
                sids.append(try #require(try created.json()["sid"] as? String))
            }
            var seen: [String] = []
            var next: String? = "/twilio/v2" + device.path("/Factors?PageSize=2")
            var pages = 0
            while let url = next {
                let page = try await client.twilio(.get, url, auth: auth, absolute: true)
                #expect(page.status == .ok)
                let body = try page.json()
                let items = try #require(body["factors"] as? [[String: Any]])
                #expect(items.count <= 2)
                seen += items.compactMap { $0["sid"] as? String }
                let meta = try #require(body["meta"] as? [String: Any])
                #expect(meta["key"] as? String == "factors" && meta["page_size"] as? Int == 2)
                next = (meta["next_page_url"] as? String).map {
                    #expect($0.contains("PageToken=PA"))
                    return String($0.dropFirst("http://127.0.0.1:8080".count))
                }
                pages += 1
            }
            #expect(seen == sids)
            #expect(pages == 2)
            let own = try await client.twilio(.get, device.path("/Factors?PageSize=1"), auth: device.auth())
            let body = try own.json()
            #expect((body["factors"] as? [[String: Any]])?.compactMap { $0["sid"] as? String } == [device.factorSid])
            #expect((body["meta"] as? [String: Any])?["next_page_url"] is NSNull)
        }
    }
}
