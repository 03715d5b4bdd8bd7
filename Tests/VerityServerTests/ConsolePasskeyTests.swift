import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Console passkeys")
struct ConsolePasskeyTests {
    /// The public URL the console's relying party is made from.
    static let origin = "https://console.example.com"

    @Test(
        "A passkey registered on the Account page signs its operator in from a fresh link, which alone no longer does",
        arguments: TestEngine.available)
    func registerAndSignIn(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let session = try await client.signIn(node, operatorName: "ada")
            let account = try await client.get("/console/account", session: session)
            #expect(account.status == .ok)
            #expect(String(buffer: account.body).contains(#"<script src="/console/console.js" defer></script>"#))
            #expect(account.headers[.contentSecurityPolicy]?.contains("script-src 'self'; connect-src 'self'") == true)
            ConsoleTests.expectStrictHeaders(account)
            let script = try await client.execute(uri: "/console/console.js", method: .get)
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(String(buffer: script.body).contains("navigator.credentials.create"))

            var authenticator = Self.authenticator()
            let registered = try await Self.register(&authenticator, name: "Laptop", client: client, session: session)
            #expect(registered.status == .ok)
            #expect(try Self.json(registered)["location"] as? String == "/console/account")
            let listed = String(buffer: try await client.get("/console/account", session: session).body)
            #expect(listed.contains("Laptop"))
            #expect(!String(buffer: try await client.get("/console", session: session).body).contains("<script"))

            // The link alone no longer signs ada in; its page asks for the passkey, and no code.
            let link = try await ConsoleSignInLimitTests.link(for: "ada", on: node)
            let page = try await client.execute(uri: "/console/sign-in?token=\(link)", method: .get)
            let html = String(buffer: page.body)
            #expect(html.contains("Sign in as ada with a passkey"))
            #expect(!html.contains(#"name="code""#))
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            let plain = try await client.post("/console/sign-in", form: ["token": link])
            #expect(plain.status == .unauthorized)
            #expect(ConsoleSignInLimitTests.alertCode(plain) == "wrong_factor")
            #expect(plain.headers[.setCookie] == nil)

            let signedIn = try await Self.signIn(&authenticator, link: link, client: client)
            #expect(signedIn.status == .ok)
            #expect(try Self.json(signedIn)["location"] as? String == "/console")
            let cookie = try #require(signedIn.headers[.setCookie])
            #expect(cookie.contains("; HttpOnly") && cookie.contains("; SameSite=Strict"))
            let second = ConsoleTests.cookieValue(cookie)
            LeakWatch.secret(second)
            #expect(try await client.get("/console", session: second).status == .ok)
            // The link is used: it signs nobody in again.
            let again = try await client.post("/console/sign-in", form: ["token": link])
            #expect(ConsoleSignInLimitTests.alertCode(again) == "invalid_session")

            let actions = try await node.verity.operators.auditTrail(search: "operator.", cursor: nil).items.map(
                \.action)
            #expect(actions.contains("operator.passkey.registered"))
            #expect(actions.contains("operator.sign_in.passkey_required"))
            #expect(actions.contains("operator.sign_in.passkey"))
        }
    }

    @Test(
        "A passkey sign-in is refused: another origin, a replay, no UV, a counter regression, a deleted or foreign passkey",
        arguments: TestEngine.available)
    func refusals(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        _ = try await node.verity.operators.create(name: "bob", withTOTP: false)
        try await node.run { client in
            let session = try await client.signIn(node, operatorName: "ada")
            var authenticator = Self.authenticator()
            #expect(
                try await Self.register(&authenticator, name: "One", client: client, session: session).status == .ok)

            // The options for a page on another origin than the public URL.
            let link = try await ConsoleSignInLimitTests.link(for: "ada", on: node)
            let foreignPage = try await Self.form(
                client, "/console/sign-in/passkey/options", ["token": link], origin: "http://127.0.0.1:8080")
            #expect(foreignPage.status == .forbidden)
            #expect(try Self.json(foreignPage)["code"] as? String == "forbidden")

            // An answer whose client data names another origin (what a phishing page relays).
            var phished = authenticator
            phished.origin = "https://console.example.com.evil.test"
            #expect(try await Self.refusal(of: Self.signIn(&phished, link: link, client: client)) == "forbidden")
            // The link stays usable for another try; the right answer signs in once, and replayed it is refused.
            let challenge = try await Self.challenge(link: link, client: client)
            let assertion = try authenticator.assert(
                challenge: challenge, credentialID: try #require(authenticator.credentialIDs.first))
            let good = try await Self.form(
                client, "/console/sign-in/passkey", ["token": link, "credential": try Self.text(assertion.json)])
            #expect(good.status == .ok)
            let next = try await ConsoleSignInLimitTests.link(for: "ada", on: node)
            let replayed = try await Self.form(
                client, "/console/sign-in/passkey", ["token": next, "credential": try Self.text(assertion.json)])
            #expect(try Self.json(replayed)["code"] as? String == "challenge_not_found")
            #expect(replayed.headers[.setCookie] == nil)

            // A challenge issued for one link does not sign in with another.
            let other = try await ConsoleSignInLimitTests.link(for: "ada", on: node)
            let crossed = try authenticator.assert(
                challenge: try await Self.challenge(link: other, client: client),
                credentialID: try #require(authenticator.credentialIDs.first))
            let refusedCrossed = try await Self.form(
                client, "/console/sign-in/passkey", ["token": next, "credential": try Self.text(crossed.json)])
            #expect(try Self.json(refusedCrossed)["code"] as? String == "challenge_not_found")

            var unverified = authenticator
            unverified.userVerified = false
            #expect(
                try await Self.refusal(of: Self.signIn(&unverified, link: next, client: client))
                    == "user_verification_required")

            // The counter goes back (a cloned authenticator): refused, and audited as such.
            var clone = authenticator
            clone.counter = 0
            #expect(try await Self.refusal(of: Self.signIn(&clone, link: next, client: client)) == "forbidden")
            let regressed = try await node.verity.operators.auditTrail(
                search: "operator.sign_in.passkey_counter", cursor: nil)
            #expect(regressed.items.count == 1)

            // A second passkey, then the first deleted: the first's answer is refused from then on.
            node.clock.advance(by: 1)
            #expect(
                try await Self.register(&authenticator, name: "Two", client: client, session: session).status == .ok)
            let passkeys = try await node.verity.operatorPasskeys.passkeys(
                of: ConsoleSessionRecord(id: "", operatorId: try Self.operatorId("ada", node), operatorName: "ada"))
            #expect(passkeys.map(\.friendlyName) == ["One", "Two"])
            let csrf = try ConsoleTests.csrf(in: try await client.get("/console/account", session: session))
            let deleted = try await client.post(
                "/console/account/passkeys/\(passkeys[0].id)/delete", form: ["csrf": csrf], session: session)
            #expect(deleted.status == .seeOther)
            let removed = try authenticator.assert(
                challenge: try await Self.challenge(link: next, client: client),
                credentialID: passkeys[0].credential.credentialID)
            let refusedRemoved = try await Self.form(
                client, "/console/sign-in/passkey", ["token": next, "credential": try Self.text(removed.json)])
            #expect(try Self.json(refusedRemoved)["code"] as? String == "wrong_factor")

            // Bob's passkey answers a challenge of ada's link.
            let bobSession = try await client.signIn(node, operatorName: "bob")
            var bobs = Self.authenticator()
            #expect(try await Self.register(&bobs, name: "Bob's", client: client, session: bobSession).status == .ok)
            let stolen = try bobs.assert(
                challenge: try await Self.challenge(link: next, client: client),
                credentialID: try #require(bobs.credentialIDs.first))
            let refusedStolen = try await Self.form(
                client, "/console/sign-in/passkey", ["token": next, "credential": try Self.text(stolen.json)])
            #expect(try Self.json(refusedStolen)["code"] as? String == "wrong_factor")
            #expect(refusedStolen.headers[.setCookie] == nil)
        }
    }

    @Test(
        "Registering needs the CSRF token, a passkey is its operator's own, and TOTP and a passkey both sign in",
        arguments: TestEngine.available)
    func formsAndTOTP(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        let totp = try await ConsoleSignInLimitTests.operatorWithTOTP("cy", on: node)
        try await node.run { client in
            let link = try await ConsoleSignInLimitTests.link(for: "cy", on: node)
            let signedIn = try await client.post(
                "/console/sign-in", form: ["token": link, "code": totp.code(at: node.clock.now())])
            let session = ConsoleTests.cookieValue(try #require(signedIn.headers[.setCookie]))
            LeakWatch.secret(session)

            let noToken = try await Self.form(client, "/console/account/passkeys/options", [:], session: session)
            #expect(noToken.status == .forbidden)
            var authenticator = Self.authenticator()
            let registered = try await Self.register(&authenticator, name: "Key", client: client, session: session)
            #expect(registered.status == .ok)
            let passkey = try #require(
                try await node.verity.operatorPasskeys.passkeys(
                    of: ConsoleSessionRecord(id: "", operatorId: try Self.operatorId("cy", node), operatorName: "cy")
                ).first)
            let csrf = try ConsoleTests.csrf(in: try await client.get("/console/account", session: session))
            let renamed = try await client.post(
                "/console/account/passkeys/\(passkey.id)/rename", form: ["csrf": csrf, "name": " YubiKey "],
                session: session)
            #expect(renamed.status == .seeOther)
            #expect(String(buffer: try await client.get("/console/account", session: session).body).contains("YubiKey"))
            let other = try await client.signIn(node, operatorName: "ada")
            let adasCSRF = try ConsoleTests.csrf(in: try await client.get("/console/account", session: other))
            let foreign = try await client.post(
                "/console/account/passkeys/\(passkey.id)/delete", form: ["csrf": adasCSRF], session: other)
            #expect(foreign.status == .notFound)

            // Cy has TOTP too: the page offers both, and either signs in.
            node.clock.advance(by: 60)
            let byCode = try await ConsoleSignInLimitTests.link(for: "cy", on: node)
            let page = String(
                buffer: try await client.execute(uri: "/console/sign-in?token=\(byCode)", method: .get).body)
            #expect(page.contains("with a passkey") && page.contains(#"name="code""#))
            let code = try await client.post(
                "/console/sign-in", form: ["token": byCode, "code": totp.code(at: node.clock.now())])
            #expect(code.status == .seeOther)
            let byPasskey = try await ConsoleSignInLimitTests.link(for: "cy", on: node)
            #expect(try await Self.signIn(&authenticator, link: byPasskey, client: client).status == .ok)
        }
    }

    // MARK: - Helpers

    /// A node whose public URL is ``origin``, with the operator `ada`, who signs in without TOTP.
    static func node(_ engine: TestEngine) async throws -> TestNode {
        let node = try await TestNode.make(engine, configure: { $0.publicURL = origin })
        _ = try await node.verity.operators.create(name: "ada", withTOTP: false)
        return node
    }

    static func authenticator() -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpID: "console.example.com", origin: origin)
    }

    static func operatorId(_ name: String, _ node: TestNode) async throws -> String {
        try #require(try await node.verity.operators.list().first { $0.name == name }).id
    }

    /// Posts `fields` as a form from a page on `origin`, with the session cookie when given.
    static func form(
        _ client: some TestClientProtocol, _ uri: String, _ fields: [String: String], session: String? = nil,
        origin: String = origin
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .origin: origin]
        if let session { headers[.cookie] = "verity_console=\(session)" }
        let body = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\(PercentEncoding.encode($0.value))" }
            .joined(separator: "&")
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any])
    }

    static func text(_ json: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    }

    static func bytes(_ text: Any?) throws -> [UInt8] {
        let text = try #require(text as? String)
        return try #require(Base64URL.decode(text))
    }

    /// The refusal's code of a JSON answer, checking that it set no cookie.
    static func refusal(of response: TestResponse) throws -> String? {
        #expect(response.headers[.setCookie] == nil)
        return try json(response)["code"] as? String
    }

    /// Runs the Account page's ceremony: options, the authenticator's answer, the answer posted with `name`.
    static func register(
        _ authenticator: inout SoftwareAuthenticator, name: String, client: some TestClientProtocol, session: String
    ) async throws -> TestResponse {
        let csrf = try ConsoleTests.csrf(in: try await client.get("/console/account", session: session))
        let options = try json(
            try await form(client, "/console/account/passkeys/options", ["csrf": csrf], session: session))
        let user = try #require(options["user"] as? [String: Any])
        let registration = authenticator.register(
            challenge: try bytes(options["challenge"]), userHandle: Data(try bytes(user["id"])))
        return try await form(
            client, "/console/account/passkeys",
            ["csrf": csrf, "name": name, "credential": try text(registration.json)],
            session: session)
    }

    /// The challenge of sign-in options for `link`.
    static func challenge(link: String, client: some TestClientProtocol) async throws -> [UInt8] {
        let options = try json(try await form(client, "/console/sign-in/passkey/options", ["token": link]))
        return try bytes(options["challenge"])
    }

    /// Runs the sign-in page's ceremony with the authenticator's first credential.
    static func signIn(_ authenticator: inout SoftwareAuthenticator, link: String, client: some TestClientProtocol)
        async throws -> TestResponse
    {
        let assertion = try authenticator.assert(
            challenge: try await challenge(link: link, client: client),
            credentialID: try #require(authenticator.credentialIDs.first))
        return try await form(
            client, "/console/sign-in/passkey", ["token": link, "credential": try text(assertion.json)])
    }
}
