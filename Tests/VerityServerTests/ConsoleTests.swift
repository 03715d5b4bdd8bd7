import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Web console")
struct ConsoleTests {
    @Test(
        "A fresh link signs in once, sets a strict session cookie, and pages carry a strict CSP",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        let (token, _) = try await node.verity.operators.signInLink(operatorName: "ada")
        LeakWatch.secret(token)
        try await node.run { client in
            let anonymous = try await client.execute(uri: "/console", method: .get)
            #expect(anonymous.status == .seeOther)
            #expect(anonymous.headers[.location] == "/console/sign-in")

            // Opening the link (what a mail scanner does) signs nobody in: it shows a button.
            let form = try await client.execute(uri: "/console/sign-in?token=\(token)", method: .get)
            #expect(form.status == .ok)
            #expect(String(buffer: form.body).contains("Sign in as ada"))
            #expect(form.headers[.setCookie] == nil)
            Self.expectStrictHeaders(form)

            let signedIn = try await client.post("/console/sign-in", form: ["token": token])
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/console")
            let cookie = try #require(signedIn.headers[.setCookie])
            #expect(cookie.hasPrefix("verity_console=vcs_"))
            #expect(cookie.contains("; HttpOnly"))
            #expect(cookie.contains("; SameSite=Strict"))
            #expect(cookie.contains("; Path=/console"))
            #expect(!cookie.contains("Secure"), "served over plain HTTP, the cookie cannot be Secure")
            let session = Self.cookieValue(cookie)
            LeakWatch.secret(session)

            let dashboard = try await client.get("/console", session: session)
            #expect(dashboard.status == .ok)
            let html = String(buffer: dashboard.body)
            #expect(html.contains("<h1>Dashboard</h1>"))
            #expect(!html.contains("<script"))
            Self.expectStrictHeaders(dashboard)

            // The link works once.
            let again = try await client.post("/console/sign-in", form: ["token": token])
            #expect(again.status == .unauthorized)
            #expect(again.headers[.setCookie] == nil)
            #expect(String(buffer: again.body).contains("expired or was already used"))
            let reopened = try await client.execute(uri: "/console/sign-in?token=\(token)", method: .get)
            #expect(reopened.status == .unauthorized)

            // A form past the body limit is a 413 page that says the limit.
            let huge = try await client.post("/console/sign-in", form: ["token": String(repeating: "x", count: 70_000)])
            #expect(huge.status == .contentTooLarge)
            #expect(String(buffer: huge.body).contains("The body must be at most 64 KiB."))

            let trail = try await node.verity.operators.auditTrail(search: nil, cursor: nil)
            #expect(trail.items.map(\.action) == ["operator.sign_in"])
            #expect(trail.items.first?.operatorName == "ada")
        }
    }

    @Test("An expired link is refused; an idle session and a signed-out session end", arguments: TestEngine.available)
    func lifetimes(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        let (expired, _) = try await node.verity.operators.signInLink(operatorName: "ada")
        LeakWatch.secret(expired)
        node.clock.advance(by: OperatorService.linkLifetime + 1)
        try await node.run { client in
            let refused = try await client.post("/console/sign-in", form: ["token": expired])
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.setCookie] == nil)

            let session = try await client.signIn(node, operatorName: "ada")
            node.clock.advance(by: OperatorService.idleTimeout - 60)
            #expect(try await client.get("/console", session: session).status == .ok)
            node.clock.advance(by: OperatorService.idleTimeout + 1)
            let idle = try await client.get("/console", session: session)
            #expect(idle.status == .seeOther, "a session idle past the timeout is signed out")

            let second = try await client.signIn(node, operatorName: "ada")
            let page = try await client.get("/console/projects", session: second)
            let signedOut = try await client.post(
                "/console/sign-out", form: ["csrf": try Self.csrf(in: page)], session: second)
            #expect(signedOut.status == .ok)
            #expect(signedOut.headers[.setCookie]?.contains("Max-Age=0") == true)
            #expect(try await client.get("/console", session: second).status == .seeOther)
        }
    }

    @Test(
        "A form posted without its CSRF token, or with another session's, changes nothing",
        arguments: TestEngine.available)
    func csrf(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        _ = try await node.verity.operators.create(name: "bob", withTOTP: false)
        try await node.run { client in
            let ada = try await client.signIn(node, operatorName: "ada")
            let bob = try await client.signIn(node, operatorName: "bob")
            let bobsToken = try Self.csrf(in: try await client.get("/console/projects", session: bob))

            let missing = try await client.post("/console/projects", form: ["name": "Initech"], session: ada)
            #expect(missing.status == .forbidden)
            let foreign = try await client.post(
                "/console/projects", form: ["name": "Initech", "csrf": bobsToken], session: ada)
            #expect(foreign.status == .forbidden)
            let anonymous = try await client.post("/console/projects", form: ["name": "Initech", "csrf": bobsToken])
            #expect(anonymous.status == .unauthorized)
            #expect(try await node.verity.admin.listProjects().map(\.name) == ["Acme"])

            let adasToken = try Self.csrf(in: try await client.get("/console/projects", session: ada))
            let created = try await client.post(
                "/console/projects", form: ["name": "Initech", "csrf": adasToken], session: ada)
            #expect(created.status == .ok)
            #expect(try await node.verity.admin.listProjects().map(\.name).sorted() == ["Acme", "Initech"])
            let actions = try await node.verity.operators.auditTrail(search: "project", cursor: nil).items
            #expect(actions.map(\.action) == ["project.create"])
            #expect(actions.first?.operatorName == "ada")
            // The search ignores case alike on every engine (SQLite's LIKE does for ASCII, PostgreSQL's does not).
            let shouted = try await node.verity.operators.auditTrail(search: "PROJECT.", cursor: nil).items
            #expect(shouted.map(\.action) == ["project.create"])
        }
    }

    @Test(
        "A key created in the console is shown once; revoked there, the API refuses it",
        arguments: TestEngine.available)
    func apiKeys(engine: TestEngine) async throws {
        try await Self.onProjectPage(engine) { node, client, session, projectPath, token in
            let created = try await client.post(
                projectPath + "/keys", form: ["name": "ci", "csrf": token], session: session)
            #expect(created.status == .ok)
            let html = String(buffer: created.body)
            let secret = try #require(html.firstMatch(of: /vk_[0-9a-z]+/).map { String($0.output) })
            LeakWatch.secret(secret)
            #expect(try await client.send(.get, "/v1/users", key: secret).status == .ok)

            let page = String(buffer: try await client.get(projectPath, session: session).body)
            #expect(!page.contains(secret), "a secret is never rendered after creation")
            let key = try #require(
                try await node.verity.admin.listKeys(projectId: node.project.id).first { $0.name == "ci" })
            node.clock.advance(by: 1)
            let revoked = try await client.post(
                projectPath + "/keys/\(key.id)/revoke", form: ["csrf": token], session: session)
            #expect(revoked.status == .seeOther)
            #expect(try await client.send(.get, "/v1/users", key: secret).status == .unauthorized)
            let actions = try await node.verity.operators.auditTrail(search: "api_key", cursor: nil).items
            #expect(actions.map(\.action) == ["api_key.revoke", "api_key.create"])
            #expect(actions.first?.target == key.id)
        }
    }

    @Test(
        "The project page changes what `verity admin project update` changes; a bad value is a 400 and changes nothing",
        arguments: TestEngine.available)
    func projectSettings(engine: TestEngine) async throws {
        try await Self.onProjectPage(engine) { node, client, session, projectPath, token in
            let saved = try await client.post(
                projectPath + "/settings",
                form: [
                    "csrf": token, "name": "Acme", "disabledChannels": "", "fallbackChannel": "whatsapp",
                    "requiresAppVerification": "required", "unusualActivityResponse": "suspend_factor",
                    "descopeCookies": "on", "descopeProjectId": " P2acme ",
                ], session: session)
            #expect(saved.status == .seeOther)
            let settings = try await node.verity.admin.project(id: node.project.id).settings
            #expect(settings.fallbackChannel == .whatsapp)
            #expect(settings.requiresAppVerification)
            #expect(settings.unusualActivityResponse == .suspendFactor)
            #expect(settings.descopeCookies)
            #expect(settings.descopeProjectId == "P2acme")
            let page = String(buffer: try await client.get(projectPath, session: session).body)
            #expect(page.contains(#"<option value="whatsapp" selected>"#))
            #expect(page.contains(#"value="P2acme""#))

            // Email cannot be a fallback (the project's own rule); unknown words are refused before it.
            for (name, value) in [
                ("fallbackChannel", "email"), ("fallbackChannel", "pigeon"), ("descopeCookies", "yes"),
                ("unusualActivityResponse", "shrug"), ("requiresAppVerification", "maybe"),
            ] {
                let refused = try await client.post(
                    projectPath + "/settings", form: ["csrf": token, name: value], session: session)
                #expect(refused.status == .badRequest, "\(name)=\(value)")
            }
            #expect(try await node.verity.admin.project(id: node.project.id).settings == settings)

            // An empty Descope project id removes it.
            _ = try await client.post(
                projectPath + "/settings", form: ["csrf": token, "descopeProjectId": ""], session: session)
            #expect(try await node.verity.admin.project(id: node.project.id).settings.descopeProjectId == nil)
        }
    }

    @Test(
        "The settings form reads text as `verity admin project update` does: none and empty alike, trimmed, any case",
        arguments: TestEngine.available)
    func settingsTextAsTheCLIReadsIt(engine: TestEngine) async throws {
        try await Self.onProjectPage(engine) { node, client, session, projectPath, token in
            // The same words Tests/cli/quickstart.sh gives the CLI; before one parser, `none` here was refused and a
            // Descope project id of `none` was stored as the id.
            let saved = try await client.post(
                projectPath + "/settings",
                form: [
                    "csrf": token, "disabledChannels": "none", "fallbackChannel": "NONE", "descopeProjectId": "none",
                    "allowedCountries": " us , ca ", "unusualActivityResponse": " Revoke_Sessions ",
                    "firebaseEmulatorAdmin": "test_numbers",
                ], session: session)
            #expect(saved.status == .seeOther)
            var settings = try await node.verity.admin.project(id: node.project.id).settings
            #expect(settings.disabledChannels == [])
            #expect(settings.fallbackChannel == nil)
            #expect(settings.descopeProjectId == nil)
            #expect(settings.allowedCountries == ["CA", "US"])
            #expect(settings.unusualActivityResponse == .revokeSessions)
            #expect(settings.firebaseEmulatorAdmin == .testNumbers)
            let page = String(buffer: try await client.get(projectPath, session: session).body)
            #expect(page.contains(#"<option value="test_numbers" selected>"#))

            // Empty means what none means; an empty SMS allow-list is refused rather than stopping every SMS.
            _ = try await client.post(
                projectPath + "/settings",
                form: ["csrf": token, "disabledChannels": "voice", "descopeProjectId": "P2acme"], session: session)
            _ = try await client.post(
                projectPath + "/settings",
                form: ["csrf": token, "disabledChannels": "", "descopeProjectId": "", "firebaseEmulatorAdmin": "off"],
                session: session)
            settings = try await node.verity.admin.project(id: node.project.id).settings
            #expect(settings.disabledChannels == [])
            #expect(settings.descopeProjectId == nil)
            #expect(settings.firebaseEmulatorAdmin == .off)
            for (name, value) in [("allowedCountries", ""), ("firebaseEmulatorAdmin", "everyone")] {
                let refused = try await client.post(
                    projectPath + "/settings", form: ["csrf": token, name: value], session: session)
                #expect(refused.status == .badRequest, "\(name)=\(value)")
            }
            #expect(try await node.verity.admin.project(id: node.project.id).settings == settings)
        }
    }

    @Test("At start, the server's emulator admin switch with no project opted in is one warning")
    func emulatorSwitchWithoutOptIn() async throws {
        let node = try await TestNode.make(.sqlite)
        var configuration = node.configuration
        configuration.firebaseFace = true
        configuration.firebaseEmulatorAdmin = true
        try await warnOfFirebaseEmulatorAdmin(configuration, verity: node.verity)
        let unused = "VERITY_FIREBASE_EMULATOR_ADMIN is on but no project has opted in"
        #expect(node.logs.lines.filter { $0.contains(unused) }.count == 1)

        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
            $0.firebaseEmulatorAdmin = .testNumbers
        }
        try await warnOfFirebaseEmulatorAdmin(configuration, verity: node.verity)
        #expect(node.logs.lines.filter { $0.contains(unused) }.count == 1)
        #expect(node.logs.text.contains("Project \(node.project.id) has the Firebase emulator admin on (test_numbers)"))
        try await node.verity.database.close()
    }

    @Test(
        "A dead message is sent again from the messages page; destinations are masked",
        arguments: TestEngine.available)
    func retryDeadMessage(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        node.sender.failNext(DeliveryError(.permanent, "carrier refused"))
        try await node.run { client in
            #expect(try await client.startVerification("+14155550123", key: node.apiKey).status == .created)
            let session = try await client.signIn(node, operatorName: "ada")
            var dead = ""
            for _ in 0..<500 where dead.isEmpty {
                let page = String(buffer: try await client.get("/console/messages?status=dead", session: session).body)
                dead = page.firstMatch(of: /messages\/(msg_[0-9a-z]+)\/retry/).map { String($0.output.1) } ?? ""
                if dead.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(!dead.isEmpty, "the failed message shows as dead with a retry button")
            let page = String(buffer: try await client.get("/console/messages", session: session).body)
            #expect(page.contains("+1********23"))
            #expect(page.contains(#"<option value="" selected>any</option><option value="pending">pending</option>"#))
            #expect(!page.contains("+14155550123"), "a destination is masked as in the logs")

            let retried = try await client.post(
                "/console/messages/\(dead)/retry", form: ["csrf": try Self.csrf(in: page)], session: session)
            #expect(retried.status == .seeOther)
            try await node.sender.waitForMessages(to: "+14155550123")
            let again = try await client.post(
                "/console/messages/\(dead)/retry", form: ["csrf": try Self.csrf(in: page)], session: session)
            #expect(again.status == .notFound, "only a dead message can be retried")
        }
    }

    @Test(
        "The dashboard counts verifications per day, channel and country, also once past days are recorded",
        arguments: TestEngine.available)
    func dashboard(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        try await node.run { client in
            #expect(try await client.startVerification("+14155550100", key: node.apiKey).status == .created)
            #expect(try await client.startVerification("+442079460958", key: node.apiKey).status == .created)
            #expect(
                try await client.startVerification("jane@example.com", channel: "email", key: node.apiKey).status
                    == .created)
            let code = try await node.sender.code(to: "+14155550100")
            #expect(try await client.check(to: "+14155550100", code: code, key: node.apiKey).status == .ok)

            func cards() async throws -> [String: String] {
                // The clock jumps days ahead: each look signs in again.
                let session = try await client.signIn(node, operatorName: "ada")
                let html = String(buffer: try await client.get("/console", session: session).body)
                var found: [String: String] = [:]
                for match in html.matches(of: /id="card-([a-z]+)"><strong>([^<]+)</) {
                    found[String(match.output.1)] = String(match.output.2)
                }
                return found
            }
            var shown = try await cards()
            #expect(shown["started"] == "3")
            #expect(shown["approved"] == "1")
            #expect(shown["conversion"] == "33%")

            // Three days on, those verifications are on a recorded day; one more is counted live.
            node.clock.advance(by: 3 * 86_400)
            #expect(try await client.startVerification("+14155550101", key: node.apiKey).status == .created)
            for _ in 0..<2 {
                shown = try await cards()
                #expect(shown["started"] == "4")
                #expect(shown["approved"] == "1")
            }
            let report = try await node.verity.verifications.activity(days: 14)
            let regions = Dictionary(uniqueKeysWithValues: report.byCountry.map { ($0.region, $0.counts.started) })
            #expect(regions == ["US": 2, "GB": 1])
            #expect(report.byChannel[.email]?.map(\.started).reduce(0, +) == 1)
            #expect(report.total(day: 10).started == 3 && report.total(day: 13).started == 1)

            node.clock.advance(by: 14 * 86_400)
            #expect(try await cards()["started"] == "0")
        }
    }

    @Test(
        "Every page answers a signed-in operator with strict headers, and sends anyone else to sign in",
        arguments: TestEngine.available)
    func pages(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        try await node.run { client in
            #expect(try await client.startVerification("+14155550100", key: node.apiKey).status == .created)
            let session = try await client.signIn(node, operatorName: "ada")
            let project = "/console/projects/\(node.project.id)"
            for path in [
                "/console", "/console/projects", project, project + "/users", project + "/security-events",
                project + "/twilio", "/console/verifications", "/console/verifications?q=%2B14155550100",
                "/console/messages", "/console/messages?status=dead", "/console/audit?q=operator",
                project + "/challenges", project + "/challenges?status=pending&q=fac_x", project + "/possession",
            ] {
                let page = try await client.get(path, session: session)
                #expect(page.status == .ok, "\(path)")
                Self.expectStrictHeaders(page)
                #expect(!String(buffer: page.body).contains("<script"), "\(path)")
                let anonymous = try await client.execute(uri: path, method: .get)
                #expect(anonymous.status == .seeOther, "\(path)")
            }
            let unknown = try await client.get("/console/projects/prj_nothing", session: session)
            #expect(unknown.status == .notFound)
            #expect(unknown.headers[.contentType] == "text/html; charset=utf-8")
            let badCursor = try await client.get("/console/messages?cursor=nope", session: session)
            #expect(badCursor.status == .badRequest)
        }
    }

    @Test(
        "A project's push challenges and possession flows, and a user's factors and active sessions, are listed",
        arguments: TestEngine.available)
    func flowsAndSessions(engine: TestEngine) async throws {
        let node = try await Self.nodeWithOperator(engine)
        try await node.run { client in
            let phone = "+14155550142"
            let signedIn = try await client.signIn(phone, node: node)
            let device = try await TestDevice.enrolled(userId: signedIn.user.id, node: node, client: client)
            let created = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: node.apiKey)
            #expect(created.status == .created)
            let shown = try #require(try await device.pending(client: client).first)
            #expect(try await device.answer(shown, .approved, client: client).status == .ok)
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550177","flow":"mobile"}"#, node: node, client: client)
            let session = try await client.signIn(node, operatorName: "ada")
            let project = "/console/projects/\(node.project.id)"

            let challenges = String(buffer: try await client.get(project + "/challenges", session: session).body)
            #expect(challenges.contains(shown.id))
            #expect(challenges.contains("<td>approved</td>"))
            #expect(challenges.contains(device.factorId))
            #expect(challenges.contains("<td>proofOfPossession</td>"))
            let pending = String(
                buffer: try await client.get(project + "/challenges?status=pending", session: session).body)
            #expect(!pending.contains(shown.id) && pending.contains("No push challenge found."))
            #expect(pending.contains(#"<option value="pending" selected>pending</option>"#))
            let byFactor = String(
                buffer: try await client.get(project + "/challenges?q=\(device.factorId)", session: session).body)
            #expect(byFactor.contains(shown.id))
            let otherFactor = String(
                buffer: try await client.get(project + "/challenges?q=fac_other", session: session).body)
            #expect(!otherFactor.contains(shown.id))
            #expect(try await client.get(project + "/challenges?status=lost", session: session).status == .badRequest)
            #expect(try await client.get(project + "/challenges?cursor=nope", session: session).status == .badRequest)

            let flows = String(buffer: try await client.get(project + "/possession", session: session).body)
            #expect(flows.contains(flow.started.correlationId))
            #expect(flows.contains(try Destination("+14155550177", channel: .sms).masked))
            #expect(!flows.contains("14155550177"))
            #expect(try await client.get(project + "/possession?cursor=nope", session: session).status == .badRequest)

            let userPath = project + "/users/\(signedIn.user.id)"
            let user = try await client.get(userPath, session: session)
            let html = String(buffer: user.body)
            #expect(html.contains(#"href="\#(project)/challenges?q=\#(device.factorId)""#))
            let sessionId = try #require(html.firstMatch(of: /<code>(ses_[^<]+)<\/code>/).map { String($0.output.1) })
            #expect(html.contains("Last refreshed"))
            let revoked = try await client.post(
                userPath + "/revoke-sessions", form: ["csrf": try Self.csrf(in: user)], session: session)
            #expect(revoked.status == .seeOther)
            let after = String(buffer: try await client.get(userPath, session: session).body)
            #expect(!after.contains(sessionId) && after.contains("No active session."))
        }
    }

    @Test(
        "Housekeeping records each finished day, so the dashboard's first view counts only the live days",
        arguments: TestEngine.available)
    func housekeepingRecordsFinishedDays(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            #expect(try await client.startVerification("+14155550100", key: node.apiKey).status == .created)
            #expect(try await client.startVerification("+14155550101", key: node.apiKey).status == .created)
            let day = Int((node.clock.now().timeIntervalSince1970 / 86_400).rounded(.down))
            node.clock.advance(by: 3 * 86_400)
            let verifications = node.verity.verifications
            #expect(try await verifications.recordedDays(from: day, to: day).isEmpty)

            let (counted, _) = try await verifications.recordFinishedDays()
            #expect(counted.filter { $0.day == day }.map(\.count).reduce(0, +) == 2)
            #expect(try await verifications.recordedDays(from: day, to: day) == [day])
            #expect(try await verifications.activity().total(day: 10).started == 2)
        }
    }

    @Test("An operator with TOTP needs the current code, once", arguments: TestEngine.available)
    func totp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let totp = try await ConsoleSignInLimitTests.operatorWithTOTP("ada", on: node)
        let (link, _) = try await node.verity.operators.signInLink(operatorName: "ada")
        LeakWatch.secret(link)
        try await node.run { client in
            let form = String(
                buffer: try await client.execute(uri: "/console/sign-in?token=\(link)", method: .get).body)
            #expect(form.contains(#"name="code""#))
            let code = totp.code(at: node.clock.now())
            let wrong = try await client.post("/console/sign-in", form: ["token": link, "code": wrongCode(for: code)])
            #expect(wrong.status == .unauthorized)
            #expect(wrong.headers[.setCookie] == nil)
            let missing = try await client.post("/console/sign-in", form: ["token": link])
            #expect(missing.status == .unauthorized)
            let right = try await client.post("/console/sign-in", form: ["token": link, "code": code])
            #expect(right.status == .seeOther)

            // The same code does not sign in twice, even with a new link.
            let (second, _) = try await node.verity.operators.signInLink(operatorName: "ada")
            LeakWatch.secret(second)
            let replayed = try await client.post("/console/sign-in", form: ["token": second, "code": code])
            #expect(replayed.status == .unauthorized)
            node.clock.advance(by: 30)
            let next = try await client.post(
                "/console/sign-in", form: ["token": second, "code": totp.code(at: node.clock.now())])
            #expect(next.status == .seeOther, "the refused code did not use up the link")
        }
    }

    @Test("Behind HTTPS the cookie is Secure; VERITY_CONSOLE=false turns the console off")
    func configuration() async throws {
        var settings = ServerConfiguration()
        try settings.apply(environment: ["VERITY_CONSOLE": "false"])
        #expect(settings.console == false)

        // The scheme in any letter case, as the Descope face's cookies judge it (one rule, HTTPCookie.isSecure).
        for publicURL in ["https://verity.example", "HTTPS://verity.example"] {
            let secure = try await TestNode.make(.sqlite, configure: { $0.publicURL = publicURL })
            _ = try await secure.verity.operators.create(name: "ada", withTOTP: false)
            let (token, _) = try await secure.verity.operators.signInLink(operatorName: "ada")
            try await secure.run { client in
                let signedIn = try await client.post("/console/sign-in", form: ["token": token])
                #expect(signedIn.headers[.setCookie]?.contains("; Secure;") == true, "\(publicURL)")
            }
        }

        let off = try await TestNode.make(.sqlite, configure: { $0.console = false })
        try await off.run { client in
            let dashboard = try await client.execute(uri: "/console", method: .get)
            #expect(dashboard.status == .notFound)
            let signIn = try await client.execute(uri: "/console/sign-in", method: .get)
            #expect(signIn.status == .notFound)
        }
    }

    // MARK: - Helpers

    /// A node with the operator `ada`, who signs in without TOTP.
    /// Operator ada signed in to a node's console, on its project's page: the page's path and its CSRF token.
    static func onProjectPage(
        _ engine: TestEngine,
        _ body:
            @Sendable (
                _ node: TestNode, _ client: any TestClientProtocol, _ session: String, _ path: String, _ token: String
            ) async throws -> Void
    ) async throws {
        let node = try await nodeWithOperator(engine)
        try await node.run { client in
            let session = try await client.signIn(node, operatorName: "ada")
            let path = "/console/projects/\(node.project.id)"
            try await body(node, client, session, path, try csrf(in: try await client.get(path, session: session)))
        }
    }

    static func nodeWithOperator(_ engine: TestEngine) async throws -> TestNode {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.operators.create(name: "ada", withTOTP: false)
        return node
    }

    static func expectStrictHeaders(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        let policy = response.headers[.contentSecurityPolicy] ?? ""
        #expect(policy.contains("default-src 'none'"), sourceLocation: sourceLocation)
        #expect(policy.contains("frame-ancestors 'none'"), sourceLocation: sourceLocation)
        #expect(!policy.contains("unsafe"), sourceLocation: sourceLocation)
        #expect(response.headers[.cacheControl] == "no-store", sourceLocation: sourceLocation)
    }

    static func cookieValue(_ header: String) -> String {
        String(header.split(separator: ";")[0].split(separator: "=", maxSplits: 1)[1])
    }

    static func csrf(in response: TestResponse) throws -> String {
        try csrf(in: String(buffer: response.body))
    }

    static func csrf(in html: String) throws -> String {
        try #require(
            html.firstMatch(of: /name="csrf" value="([0-9a-f]+)"/).map { String($0.output.1) })
    }
}

extension TestClientProtocol {
    func get(_ uri: String, session: String) async throws -> TestResponse {
        try await execute(uri: uri, method: .get, headers: [.cookie: "verity_console=\(session)"])
    }

    func post(_ uri: String, form: [String: String], session: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let session { headers[.cookie] = "verity_console=\(session)" }
        let body = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(PercentEncoding.encode($0.value))" }
            .joined(separator: "&")
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Signs `operatorName` in with a fresh link; the session cookie's value.
    func signIn(_ node: TestNode, operatorName: String) async throws -> String {
        let (token, _) = try await node.verity.operators.signInLink(operatorName: operatorName)
        LeakWatch.secret(token)
        let response = try await post("/console/sign-in", form: ["token": token])
        let cookie = try #require(response.headers[.setCookie])
        let session = ConsoleTests.cookieValue(cookie)
        LeakWatch.secret(session)
        return session
    }
}
