import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

@Suite("Twilio Verify face")
struct TwilioVerifyTests {
    let phone = "+14155550100"

    // MARK: - Services

    @Test("Services: create, fetch, update, list page by page, delete", arguments: TestEngine.available)
    func servicesLifecycle(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let created = try await client.twilio(
                .post, "/Services", auth: auth,
                form: ["FriendlyName": "Acme Login", "CodeLength": "8", "Totp.TimeStep": "60"])
            #expect(created.status == .created)
            let service = try created.json()
            let sid = try #require(service["sid"] as? String)
            #expect(sid.count == 34 && sid.hasPrefix("VA") && TwilioSID.isValid(sid, prefix: "VA"))
            #expect(sid.dropFirst(2) == sid.dropFirst(2).lowercased())
            #expect(service["account_sid"] as? String == auth.accountSid)
            #expect(service["friendly_name"] as? String == "Acme Login")
            #expect(service["code_length"] as? Int == 8)
            #expect(service["custom_code_enabled"] as? Bool == false)
            #expect(service["tts_name"] is NSNull)
            let totp = try #require(service["totp"] as? [String: Any])
            #expect(totp["issuer"] as? String == "Acme Login")
            #expect(totp["time_step"] as? Int == 60)
            #expect(totp["code_length"] as? Int == 6)
            #expect(totp["skew"] as? Int == 1)
            #expect(service["date_created"] as? String == "2027-01-15T08:00:00Z")
            #expect(service["url"] as? String == "http://127.0.0.1:8080/twilio/v2/Services/\(sid)")
            let links = try #require(service["links"] as? [String: String])
            #expect(links["verifications"] == "http://127.0.0.1:8080/twilio/v2/Services/\(sid)/Verifications")

            let fetched = try await client.twilio(.get, "/Services/\(sid)", auth: auth)
            #expect(fetched.status == .ok)
            #expect(try fetched.json()["friendly_name"] as? String == "Acme Login")

            node.clock.advance(by: 60)
            let updated = try await client.twilio(
                .post, "/Services/\(sid)", auth: auth, form: ["FriendlyName": "Acme", "CodeLength": "4"])
            #expect(updated.status == .ok)
            let changed = try updated.json()
            #expect(changed["friendly_name"] as? String == "Acme")
            #expect(changed["code_length"] as? Int == 4)
            #expect(changed["date_updated"] as? String == "2027-01-15T08:01:00Z")

            // Services list in creation order (the test clock stands still unless moved).
            for name in ["Second", "Third"] {
                node.clock.advance(by: 1)
                #expect(
                    try await client.twilio(.post, "/Services", auth: auth, form: ["FriendlyName": name]).status
                        == .created)
            }
            var names: [String] = []
            var next: String? = "/twilio/v2/Services?PageSize=2"
            var pages = 0
            while let url = next {
                let page = try await client.twilio(.get, url, auth: auth, absolute: true)
                #expect(page.status == .ok)
                let body = try page.json()
                let meta = try #require(body["meta"] as? [String: Any])
                #expect(meta["key"] as? String == "services")
                #expect(meta["page_size"] as? Int == 2)
                #expect(meta["page"] as? Int == pages)
                names += try #require(body["services"] as? [[String: Any]]).compactMap {
                    $0["friendly_name"] as? String
                }
                next = (meta["next_page_url"] as? String).map {
                    #expect($0.hasPrefix("http://127.0.0.1:8080/twilio/v2/Services?") && $0.contains("PageToken=PA"))
                    return String($0.dropFirst("http://127.0.0.1:8080".count))
                }
                pages += 1
            }
            #expect(names == ["Acme", "Second", "Third"])
            #expect(pages == 2)

            let deleted = try await client.twilio(.delete, "/Services/\(sid)", auth: auth)
            #expect(deleted.status == .noContent)
            let gone = try await client.twilio(.get, "/Services/\(sid)", auth: auth)
            try gone.expectTwilioError(
                404, code: 20404, message: "The requested resource /Services/\(sid) was not found")
            let deletedTwice = try await client.twilio(.delete, "/Services/\(sid)", auth: auth)
            try deletedTwice.expectTwilioError(404, code: 20404)
        }
    }

    @Test(
        "Services: bad settings are 400 60200 naming the parameter",
        arguments: [
            ["CodeLength": "6"],
            ["FriendlyName": "", "CodeLength": "6"],
            ["FriendlyName": String(repeating: "x", count: 33)],
            ["FriendlyName": "Acme", "CodeLength": "3"],
            ["FriendlyName": "Acme", "CodeLength": "six"],
            ["FriendlyName": "Acme", "Totp.Skew": "3"],
            ["FriendlyName": "Acme", "Push.IncludeDate": "yes"],
            ["FriendlyName": "Acme", "Push.ApnCredentialSid": "CR123"],
        ])
    func serviceValidation(form: [String: String]) async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let response = try await client.twilio(.post, "/Services", auth: auth, form: form)
            let error = try response.expectTwilioError(400, code: 60200)
            #expect((error["message"] as? String)?.hasPrefix("Invalid parameter: ") == true)
        }
    }

    // MARK: - Verifications

    @Test(
        "Verify: start, same code on re-send, wrong code is 200 pending, right code approves, then 404",
        arguments: TestEngine.available)
    func verificationFlow(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth, codeLength: 8)
            let started = try await client.twilio(
                .post, "/Services/\(service)/Verifications", auth: auth,
                form: ["To": "+1 415 555 0100", "Channel": "sms"])
            #expect(started.status == .created)
            let verification = try started.json()
            let sid = try #require(verification["sid"] as? String)
            #expect(sid.count == 34 && TwilioSID.isValid(sid, prefix: "VE"))
            #expect(verification["service_sid"] as? String == service)
            #expect(verification["account_sid"] as? String == auth.accountSid)
            #expect(verification["to"] as? String == phone)
            #expect(verification["channel"] as? String == "sms")
            #expect(verification["status"] as? String == "pending")
            #expect(verification["valid"] as? Bool == false)
            #expect(verification["amount"] is NSNull)
            #expect(verification["lookup"] as? [String: Any] != nil)
            let attempts = try #require(verification["send_code_attempts"] as? [[String: Any]])
            #expect(attempts.count == 1)
            #expect(attempts.first?["channel"] as? String == "SMS")
            #expect((attempts.first?["attempt_sid"] as? String)?.hasPrefix("VL") == true)
            #expect(
                verification["url"] as? String
                    == "http://127.0.0.1:8080/twilio/v2/Services/\(service)/Verifications/\(sid)")
            let code = try await node.sender.code(to: phone)
            #expect(code.count == 8)

            let resent = try await client.twilio(
                .post, "/Services/\(service)/Verifications", auth: auth, form: ["To": phone, "Channel": "sms"])
            #expect(resent.status == .created)
            #expect(try resent.json()["sid"] as? String == sid)
            #expect((try resent.json()["send_code_attempts"] as? [Any])?.count == 2)
            #expect(try await node.sender.code(to: phone, count: 2) == code)

            let fetched = try await client.twilio(.get, "/Services/\(service)/Verifications/\(sid)", auth: auth)
            #expect(fetched.status == .ok)
            #expect(try fetched.json()["status"] as? String == "pending")

            let wrong = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth,
                form: ["To": phone, "Code": wrongCode(for: code)])
            #expect(wrong.status == .ok)
            let wrongBody = try wrong.json()
            #expect(wrongBody["status"] as? String == "pending")
            #expect(wrongBody["valid"] as? Bool == false)
            #expect(wrongBody["sid"] as? String == sid)

            let right = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code])
            #expect(right.status == .ok)
            let rightBody = try right.json()
            #expect(rightBody["status"] as? String == "approved")
            #expect(rightBody["valid"] as? Bool == true)
            #expect(rightBody["to"] as? String == phone)

            let again = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth,
                form: ["VerificationSid": sid, "Code": code])
            try again.expectTwilioError(
                404, code: 20404,
                message: "The requested resource /Services/\(service)/VerificationCheck was not found")
            let fetchedAfter = try await client.twilio(
                .get, "/Services/\(service)/Verifications/\(sid)", auth: auth)
            try fetchedAfter.expectTwilioError(404, code: 20404)
        }
    }

    @Test("Verify: an expired verification is 404 20404 on check and fetch", arguments: TestEngine.available)
    func expired(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let sid = try await client.twilioStart(phone, service: service, auth: auth)
            let code = try await node.sender.code(to: phone)
            node.clock.advance(by: 601)
            let check = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code])
            try check.expectTwilioError(404, code: 20404)
            let fetched = try await client.twilio(.get, "/Services/\(service)/Verifications/\(sid)", auth: auth)
            try fetched.expectTwilioError(404, code: 20404)
        }
    }

    @Test("Verify: the 6th send is 429 60203, the 6th check 429 60202", arguments: TestEngine.available)
    func limits(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            for _ in 1...5 { _ = try await client.twilioStart(phone, service: service, auth: auth) }
            let sixth = try await client.twilio(
                .post, "/Services/\(service)/Verifications", auth: auth, form: ["To": phone, "Channel": "sms"])
            try sixth.expectTwilioError(429, code: 60203, message: "Max send attempts reached")

            let code = try await node.sender.code(to: phone)
            var statuses: [String] = []
            for _ in 1...5 {
                let wrong = try await client.twilio(
                    .post, "/Services/\(service)/VerificationCheck", auth: auth,
                    form: ["To": phone, "Code": wrongCode(for: code)])
                #expect(wrong.status == .ok)
                statuses.append(try wrong.json()["status"] as? String ?? "")
            }
            // As on Twilio: every wrong code reports pending; the limit shows on the next check (60202), and the
            // verification's own status says why.
            #expect(statuses == ["pending", "pending", "pending", "pending", "pending"])
            let outOfChecks = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code])
            try outOfChecks.expectTwilioError(429, code: 60202, message: "Max check attempts reached")
            let other = "+14155550101"
            let sid = try await client.twilioStart(other, service: service, auth: auth)
            let otherCode = try await node.sender.code(to: other)
            for _ in 1...5 {
                _ = try await client.twilio(
                    .post, "/Services/\(service)/VerificationCheck", auth: auth,
                    form: ["VerificationSid": sid, "Code": wrongCode(for: otherCode)])
            }
            let sixthCheck = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth,
                form: ["VerificationSid": sid, "Code": otherCode])
            try sixthCheck.expectTwilioError(429, code: 60202, message: "Max check attempts reached")
        }
    }

    @Test(
        "Verify: out of checks, a check by To is 429 60202 (as by SID) until the verification expires",
        arguments: TestEngine.available)
    func checkLimitByTo(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let check = "/Services/\(service)/VerificationCheck"
            let sid = try await client.twilioStart(phone, service: service, auth: auth)
            let code = try await node.sender.code(to: phone)
            for _ in 1...5 {
                #expect(
                    try await client.twilio(
                        .post, check, auth: auth, form: ["To": phone, "Code": wrongCode(for: code)]
                    )
                    .status == .ok)
            }
            for form in [["To": phone, "Code": code], ["VerificationSid": sid, "Code": code]] {
                try await client.twilio(.post, check, auth: auth, form: form)
                    .expectTwilioError(429, code: 60202, message: "Max check attempts reached")
            }
            // Another service's checks of the number are not affected.
            let other = try await client.twilioService(auth: auth)
            try await client.twilio(
                .post, "/Services/\(other)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code]
            ).expectTwilioError(404, code: 20404)
            // A new verification is the latest: checks by To go to it.
            let next = try await client.twilioStart(phone, service: service, auth: auth)
            #expect(next != sid)
            let nextCode = try await node.sender.code(to: phone, count: 2)
            let approved = try await client.twilio(.post, check, auth: auth, form: ["To": phone, "Code": nextCode])
            #expect(try approved.json()["status"] as? String == "approved")
            try await client.twilio(.post, check, auth: auth, form: ["To": phone, "Code": nextCode])
                .expectTwilioError(404, code: 20404)

            // Once the verification out of checks has expired, the number has nothing to check.
            let second = "+14155550101"
            _ = try await client.twilioStart(second, service: service, auth: auth)
            let secondCode = try await node.sender.code(to: second)
            for _ in 1...5 {
                _ = try await client.twilio(
                    .post, check, auth: auth, form: ["To": second, "Code": wrongCode(for: secondCode)])
            }
            try await client.twilio(.post, check, auth: auth, form: ["To": second, "Code": secondCode])
                .expectTwilioError(429, code: 60202)
            node.clock.advance(by: 601)
            try await client.twilio(.post, check, auth: auth, form: ["To": second, "Code": secondCode])
                .expectTwilioError(404, code: 20404)
        }
    }

    @Test("Verify: PSD2 Amount and Payee on a check are refused (400 60204), not ignored")
    func psd2Check() async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            _ = try await client.twilioStart(phone, service: service, auth: auth)
            let code = try await node.sender.code(to: phone)
            for extra in [["Amount": "€39.99"], ["Payee": "Acme"]] {
                try await client.twilio(
                    .post, "/Services/\(service)/VerificationCheck", auth: auth,
                    form: extra.merging(["To": phone, "Code": code]) { $1 }
                ).expectTwilioError(400, code: 60204)
            }
            let approved = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code])
            #expect(try approved.json()["status"] as? String == "approved")
        }
    }

    @Test(
        "Verify: invalid input is 400 with Twilio's code",
        arguments: [
            (["To": "+1555", "Channel": "sms"], 60200, "Invalid parameter: To"),
            (["To": "not-a-number", "Channel": "sms"], 60200, "Invalid parameter: To"),
            (["To": "nobody@", "Channel": "email"], 60200, "Invalid parameter: To"),
            (["To": "+14155550100", "Channel": "carrier-pigeon"], 60200, "Invalid parameter: Channel"),
            (["To": "+14155550100", "Channel": "auto"], 60200, "Invalid parameter: Channel"),
            (["Channel": "sms"], 60200, "Invalid parameter: To"),
            (["To": "+14155550100"], 60200, "Invalid parameter: Channel"),
            (["To": "+14155550100", "Channel": "sms", "Locale": "not a locale!"], 60200, "Invalid parameter: Locale"),
            (["To": "+14155550100", "Channel": "sms", "CustomCode": "1234"], 60204, "Service does not support"),
            (
                ["To": "+14155550100", "Channel": "sms", "Amount": "€39.99"], 60204,
                "Service does not support this feature: Amount"
            ),
            (
                ["To": "+14155550100", "Channel": "sms", "Payee": "Acme"], 60204,
                "Service does not support this feature: Payee"
            ),
        ])
    func invalidStart(form: [String: String], code: Int, message: String) async throws {
        let node = try await TestNode.make(.sqlite)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let response = try await client.twilio(.post, "/Services/\(service)/Verifications", auth: auth, form: form)
            let error = try response.expectTwilioError(400, code: code)
            #expect((error["message"] as? String)?.hasPrefix(message) == true)
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("Verify: a check names To or VerificationSid (60221) and has a Code", arguments: TestEngine.available)
    func invalidCheck(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let path = "/Services/\(service)/VerificationCheck"
            try await client.twilio(.post, path, auth: auth, form: ["Code": "123456"])
                .expectTwilioError(400, code: 60221)
            try await client.twilio(.post, path, auth: auth, form: ["To": phone])
                .expectTwilioError(400, code: 60200, message: "Invalid parameter: Code (Code is required)")
            try await client.twilio(.post, path, auth: auth, form: ["To": phone, "Code": "12"])
                .expectTwilioError(400, code: 60200)
            try await client.twilio(.post, path, auth: auth, form: ["To": phone, "Code": "123456"])
                .expectTwilioError(404, code: 20404)
            try await client.twilio(.post, path, auth: auth, form: ["VerificationSid": "VE123", "Code": "123456"])
                .expectTwilioError(404, code: 20404)
        }
    }

    @Test("Verify: Status=canceled and Status=approved update a pending verification", arguments: TestEngine.available)
    func updateStatus(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let first = try await client.twilioStart(phone, service: service, auth: auth)
            let path = "/Services/\(service)/Verifications/\(first)"
            try await client.twilio(.post, path, auth: auth, form: ["Status": "pending"])
                .expectTwilioError(400, code: 60200, message: "Invalid parameter: Status (canceled or approved)")
            let canceled = try await client.twilio(.post, path, auth: auth, form: ["Status": "canceled"])
            #expect(canceled.status == .ok)
            #expect(try canceled.json()["status"] as? String == "canceled")
            try await client.twilio(.post, path, auth: auth, form: ["Status": "canceled"])
                .expectTwilioError(404, code: 20404)
            try await client.twilio(.get, path, auth: auth).expectTwilioError(404, code: 20404)

            let second = try await client.twilioStart(phone, service: service, auth: auth)
            #expect(second != first)
            let approved = try await client.twilio(
                .post, "/Services/\(service)/Verifications/\(second)", auth: auth, form: ["Status": "approved"])
            #expect(approved.status == .ok)
            #expect(try approved.json()["status"] as? String == "approved")
            #expect(try approved.json()["valid"] as? Bool == true)
            try await client.twilio(
                .post, "/Services/\(service)/Verifications/\(second)", auth: auth, form: ["Status": "approved"]
            ).expectTwilioError(404, code: 20404)
        }
    }

    @Test("Verify: each service has its own verifications and code length", arguments: TestEngine.available)
    func servicesAreApart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let first = try await client.twilioService(auth: auth, codeLength: 4)
            let second = try await client.twilioService(auth: auth, codeLength: 10)
            let one = try await client.twilioStart(phone, service: first, auth: auth)
            let firstCode = try await node.sender.code(to: phone)
            let two = try await client.twilioStart(phone, service: second, auth: auth)
            let secondCode = try await node.sender.code(to: phone, count: 2)
            #expect(one != two)
            #expect(firstCode.count == 4 && secondCode.count == 10)
            try await client.twilio(.get, "/Services/\(second)/Verifications/\(one)", auth: auth)
                .expectTwilioError(404, code: 20404)
            try await client.twilio(
                .post, "/Services/\(second)/VerificationCheck", auth: auth,
                form: ["VerificationSid": one, "Code": firstCode]
            ).expectTwilioError(404, code: 20404)
            let checked = try await client.twilio(
                .post, "/Services/\(first)/VerificationCheck", auth: auth, form: ["To": phone, "Code": firstCode])
            #expect(try checked.json()["status"] as? String == "approved")
            // The native API does not see a Twilio service's verifications by destination.
            let native = try await client.check(to: phone, code: secondCode, key: node.apiKey)
            #expect(native.status == .notFound)
        }
    }

    // MARK: - Credentials

    @Test(
        "Auth: account SID or API key SID with a Verity API key; anything else is 401 20003",
        arguments: TestEngine.available)
    func authentication(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        let (other, otherKey) = try await node.otherProject()
        let otherAccount = try #require(TwilioSID.account(forProject: other.id))
        let keys = try await node.verity.admin.listKeys(projectId: node.project.id)
        let key = try #require(keys.first)
        let keySid = try #require(TwilioSID.apiKey(forKey: key.id))
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let apiKeyAuth = TwilioAuth(accountSid: keySid, secret: node.apiKey)
            #expect(try await client.twilio(.get, "/Services/\(service)", auth: apiKeyAuth).status == .ok)

            let refused: [TwilioAuth?] = [
                nil,
                TwilioAuth(accountSid: auth.accountSid, secret: "vk_wrong"),
                TwilioAuth(accountSid: auth.accountSid, secret: otherKey),
                TwilioAuth(accountSid: otherAccount, secret: node.apiKey),
                TwilioAuth(accountSid: "AC" + String(repeating: "0", count: 32), secret: node.apiKey),
                TwilioAuth(accountSid: auth.accountSid, secret: ""),
            ]
            for credentials in refused {
                let response = try await client.twilio(.get, "/Services/\(service)", auth: credentials)
                let error = try response.expectTwilioError(401, code: 20003, message: "Authenticate")
                #expect(Set(error.keys) == ["code", "message", "more_info", "status"])
                #expect(response.headers[.date] != nil)
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            }
            let bearer = try await client.execute(
                uri: "/twilio/v2/Services", method: .get, headers: [.authorization: "Bearer \(node.apiKey)"])
            try bearer.expectTwilioError(401, code: 20003)

            // Another project's credentials do not see this project's service.
            let otherAuth = TwilioAuth(accountSid: otherAccount, secret: otherKey)
            try await client.twilio(.get, "/Services/\(service)", auth: otherAuth).expectTwilioError(404, code: 20404)
        }
    }

    @Test("Hostile input is a 4xx Twilio error, never a 5xx", arguments: TestEngine.available)
    func hostileInput(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            func post(_ path: String, body: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
                var headers = extra
                headers[.authorization] = headers[.authorization] ?? auth.header
                headers[.contentType] = "application/x-www-form-urlencoded"
                return try await client.execute(
                    uri: "/twilio/v2" + path, method: .post, headers: headers, body: ByteBuffer(string: body))
            }
            let verifications = "/Services/\(service)/Verifications"
            try await post(verifications, body: "To=%zz&Channel=sms").expectTwilioError(400, code: 60200)
            try await post(verifications, body: "=x&&&").expectTwilioError(400, code: 60200)
            try await post(verifications, body: "To=" + String(repeating: "1", count: 70_000))
                .expectTwilioError(413, code: 20413)
            // A repeated parameter counts once: its first value.
            let repeated = try await post(verifications, body: "To=%2B14155550100&Channel=sms&To=%2B14155550101")
            #expect(repeated.status == .created)
            #expect(try repeated.json()["to"] as? String == "+14155550100")
            for header in ["Basic", "Basic !!!", "Basic " + String(repeating: "A", count: 600), "Digest abc"] {
                try await post(verifications, body: "To=x", headers: [.authorization: header])
                    .expectTwilioError(401, code: 20003)
            }
            for path in [
                "/Services/VA\(String(repeating: "z", count: 32))/Verifications", "/Services/x/Verifications",
                "\(verifications)/VE123", "\(verifications)/ver_\(String(repeating: "0", count: 26))",
            ] {
                try await post(path, body: "Status=canceled").expectTwilioError(404, code: 20404)
            }
            try await client.twilio(.get, "/Services?PageSize=0", auth: auth).expectTwilioError(400, code: 60200)
            try await client.twilio(.get, "/Services?PageToken=PAxyz", auth: auth).expectTwilioError(400, code: 60200)
            #expect(!node.logs.text.contains("Unhandled error"))
        }
    }

    // MARK: - Mount and mapping

    @Test("The prefix is configurable: at the root the face serves /v2")
    func rootMount() async throws {
        let node = try await TestNode.make(.sqlite, configure: { $0.twilioVerifyPrefix = "" })
        let auth = try node.twilioAuth()
        try await node.run { client in
            let response = try await client.twilio(.get, "/v2/Services", auth: auth, absolute: true)
            #expect(response.status == .ok)
            let meta = try #require(try response.json()["meta"] as? [String: Any])
            #expect(meta["url"] as? String == "http://127.0.0.1:8080/v2/Services?PageSize=50&Page=0")
        }
        let off = try await TestNode.make(.sqlite, configure: { $0.twilioVerifyPrefix = nil })
        try await off.run { client in
            let response = try await client.twilio(.get, "/Services", auth: auth)
            #expect(response.status == .notFound)
        }
    }

    @Test(
        "VERITY_TWILIO_VERIFY_PREFIX",
        arguments: [
            ("/twilio", "/twilio"), ("/twilio/", "/twilio"), ("/", ""), ("/api/twilio-verify", "/api/twilio-verify"),
            ("off", nil),
        ])
    func prefixSetting(text: String, expected: String?) throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ["VERITY_TWILIO_VERIFY_PREFIX": text])
        #expect(configuration.twilioVerifyPrefix == expected)
    }

    @Test(
        "VERITY_TWILIO_VERIFY_PREFIX refuses what is not a path", arguments: ["twilio", "/a b", "/v1", "/:id", "//x"])
    func badPrefix(text: String) {
        var configuration = ServerConfiguration()
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: ["VERITY_TWILIO_VERIFY_PREFIX": text])
        }
    }

    @Test("SIDs map to Verity ids and back")
    func sidMapping() throws {
        let identifiers = Identifiers(random: SystemRandomSource())
        for _ in 0..<100 {
            let id = identifiers.make("ver")
            let sid = try #require(TwilioSID.sid("VE", verityId: id))
            #expect(sid.count == 34 && sid.hasPrefix("VE"))
            #expect(sid.dropFirst(2).allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(TwilioSID.verityId(sid, prefix: "VE", idPrefix: "ver") == id)
        }
        #expect(TwilioSID.sid("VE", verityId: "ver_short") == nil)
        #expect(TwilioSID.verityId("VA" + String(repeating: "a", count: 32), prefix: "VE", idPrefix: "ver") == nil)
        #expect(TwilioSID.verityId("VE" + String(repeating: "g", count: 32), prefix: "VE", idPrefix: "ver") == nil)
    }
}

// MARK: - Helpers

/// Twilio Basic credentials: an account (or API key) SID and a secret.
struct TwilioAuth: Sendable {
    var accountSid: String
    var secret: String

    var header: String {
        "Basic " + Data("\(accountSid):\(secret)".utf8).base64EncodedString()
    }
}

extension TestNode {
    /// The project's account SID with its API key as auth token.
    func twilioAuth() throws -> TwilioAuth {
        TwilioAuth(accountSid: try #require(TwilioSID.account(forProject: project.id)), secret: apiKey)
    }
}

extension TestClientProtocol {
    /// A request to the face mounted at `/twilio/v2` (or to `path` as it is when `absolute`), form-encoded.
    func twilio(
        _ method: HTTPRequest.Method, _ path: String, auth: TwilioAuth?, form: [String: String]? = nil,
        absolute: Bool = false
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let auth { headers[.authorization] = auth.header }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let encoded = form.sorted { $0.key < $1.key }.map { name, value in
                "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
            }
            body = ByteBuffer(string: encoded.joined(separator: "&"))
        }
        return try await execute(
            uri: absolute ? path : "/twilio/v2" + path, method: method, headers: headers, body: body)
    }

    /// Creates a service and returns its SID.
    func twilioService(auth: TwilioAuth, codeLength: Int = 6) async throws -> String {
        let response = try await twilio(
            .post, "/Services", auth: auth, form: ["FriendlyName": "Acme", "CodeLength": "\(codeLength)"])
        #expect(response.status == .created)
        return try #require(try response.json()["sid"] as? String)
    }

    /// Starts an SMS verification and returns its SID.
    func twilioStart(_ to: String, service: String, auth: TwilioAuth) async throws -> String {
        let response = try await twilio(
            .post, "/Services/\(service)/Verifications", auth: auth, form: ["To": to, "Channel": "sms"])
        #expect(response.status == .created)
        return try #require(try response.json()["sid"] as? String)
    }
}

extension TestResponse {
    /// The body as a JSON object.
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
    }

    /// Checks a Twilio error response (status, code, `more_info`, and no RFC 9457 keys) and returns its body.
    @discardableResult
    func expectTwilioError(_ status: Int, code: Int, message: String? = nil) throws -> [String: Any] {
        #expect(self.status.code == status)
        #expect(headers[.contentType] == "application/json")
        let body = try json()
        #expect(body["code"] as? Int == code)
        #expect(body["status"] as? Int == status)
        #expect(body["more_info"] as? String == "https://www.twilio.com/docs/errors/\(code)")
        #expect(body["type"] == nil && body["title"] == nil)
        if let message { #expect(body["message"] as? String == message) }
        return body
    }
}
