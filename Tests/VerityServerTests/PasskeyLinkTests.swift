import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Hosted passkey page")
struct PasskeyLinkTests {
    @Test(
        "A backend's registration link adds a passkey on the page, and a sign-in link hands the session out once",
        arguments: TestEngine.available)
    func registerAndSignIn(engine: TestEngine) async throws {
        let (node, user) = try await Self.node(engine)
        try await node.run { client in
            let made = try await Self.create(#"{"ceremony":"registration","userId":"\#(user.id)"}"#, node, client)
            #expect(made.status == .created)
            let link = try ConsolePasskeyTests.json(made)
            let url = try #require(link["url"] as? String)
            #expect(url.hasPrefix("https://example.com/passkeys/vpk_"))
            #expect(link["status"] as? String == "pending")
            let path = String(url.dropFirst("https://example.com".count))
            LeakWatch.secret(String(path.dropFirst("/passkeys/".count)))

            let page = try await client.execute(uri: path, method: .get)
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains(#"<script src="/passkey-page.js" defer></script>"#))
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'; connect-src 'self'") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)

            var authenticator = SoftwareAuthenticator()
            let options = try ConsolePasskeyTests.json(
                try await ConsolePasskeyTests.form(client, path + "/options", [:], origin: "https://example.com"))
            let userEntry = try #require(options["user"] as? [String: Any])
            let registration = authenticator.register(
                challenge: try ConsolePasskeyTests.bytes(options["challenge"]),
                userHandle: Data(try ConsolePasskeyTests.bytes(userEntry["id"])))
            let done = try await ConsolePasskeyTests.form(
                client, path, ["credential": try ConsolePasskeyTests.text(registration.json)],
                origin: "https://example.com")
            #expect(done.status == .ok)
            #expect(try ConsolePasskeyTests.json(done)["location"] as? String == path)
            #expect(String(buffer: try await client.execute(uri: path, method: .get).body).contains("Done."))
            let spent = try await ConsolePasskeyTests.form(
                client, path + "/options", [:], origin: "https://example.com")
            #expect(spent.status == .gone)
            let read = try ConsolePasskeyTests.json(try await Self.read(link, node, client))
            #expect(read["status"] as? String == "completed")
            #expect(read["url"] == nil)
            let stored = try await node.verity.passkeys.passkeys(userId: user.id, in: try await Self.project(node))
            #expect(read["passkeyId"] as? String == stored.first?.id)

            // A discoverable sign-in: the page names nobody, the passkey's user handle does.
            let signIn = try ConsolePasskeyTests.json(try await Self.create(#"{"ceremony":"sign_in"}"#, node, client))
            let signInPath = String(try #require(signIn["url"] as? String).dropFirst("https://example.com".count))
            LeakWatch.secret(String(signInPath.dropFirst("/passkeys/".count)))
            let request = try ConsolePasskeyTests.json(
                try await ConsolePasskeyTests.form(client, signInPath + "/options", [:], origin: "https://example.com"))
            let assertion = try authenticator.assert(
                challenge: try ConsolePasskeyTests.bytes(request["challenge"]),
                credentialID: try #require(authenticator.credentialIDs.first))
            let signedIn = try await ConsolePasskeyTests.form(
                client, signInPath, ["credential": try ConsolePasskeyTests.text(assertion.json)],
                origin: "https://example.com")
            #expect(signedIn.status == .ok)
            let first = try ConsolePasskeyTests.json(try await Self.read(signIn, node, client))
            #expect(first["status"] as? String == "completed")
            let session = try #require(first["session"] as? [String: Any])
            #expect((session["sessionJwt"] as? String)?.isEmpty == false)
            #expect((session["refreshToken"] as? String)?.hasPrefix("vrt_") == true)
            #expect((session["user"] as? [String: Any])?["id"] as? String == user.id)
            let second = try ConsolePasskeyTests.json(try await Self.read(signIn, node, client))
            #expect(second["session"] == nil, "the session is handed out once")
        }
    }

    @Test(
        "The page refuses another origin and a foreign answer, keeps the link for another try, and expires it",
        arguments: TestEngine.available)
    func refusals(engine: TestEngine) async throws {
        let (node, user) = try await Self.node(engine)
        try await node.run { client in
            let missingUser = try await Self.create(#"{"ceremony":"registration"}"#, node, client)
            #expect(missingUser.status == .badRequest)
            let link = try ConsolePasskeyTests.json(
                try await Self.create(#"{"ceremony":"registration","userId":"\#(user.id)"}"#, node, client))
            let path = String(try #require(link["url"] as? String).dropFirst("https://example.com".count))
            LeakWatch.secret(String(path.dropFirst("/passkeys/".count)))

            let foreignPage = try await ConsolePasskeyTests.form(
                client, path + "/options", [:], origin: "https://evil.example.net")
            #expect(foreignPage.status == .forbidden)
            #expect(try ConsolePasskeyTests.json(foreignPage)["code"] as? String == "forbidden")

            let options = try ConsolePasskeyTests.json(
                try await ConsolePasskeyTests.form(client, path + "/options", [:], origin: "https://example.com"))
            var phished = SoftwareAuthenticator(origin: "https://evil.example.net")
            let registration = phished.register(
                challenge: try ConsolePasskeyTests.bytes(options["challenge"]), userHandle: Data(user.id.utf8))
            let refused = try await ConsolePasskeyTests.form(
                client, path, ["credential": try ConsolePasskeyTests.text(registration.json)],
                origin: "https://example.com")
            #expect(refused.status == .forbidden)
            #expect(
                try ConsolePasskeyTests.json(try await Self.read(link, node, client))["status"] as? String == "pending")
            #expect(try await node.verity.passkeys.passkeys(userId: user.id, in: try await Self.project(node)).isEmpty)

            node.clock.advance(by: PasskeyLinkService.lifetime + 1)
            #expect(try await client.execute(uri: path, method: .get).status == .notFound)
            let late = try await ConsolePasskeyTests.form(client, path + "/options", [:], origin: "https://example.com")
            #expect(late.status == .gone)
            #expect(
                try ConsolePasskeyTests.json(try await Self.read(link, node, client))["status"] as? String == "expired")
        }
    }

    @Test(
        "A link whose answer was cut short by a stopped node takes another once the answer's lease runs out",
        arguments: TestEngine.available)
    func answerOfAStoppedNode(engine: TestEngine) async throws {
        let (node, user) = try await Self.node(engine)
        try await node.run { client in
            let link = try ConsolePasskeyTests.json(
                try await Self.create(#"{"ceremony":"registration","userId":"\#(user.id)"}"#, node, client))
            let path = String(try #require(link["url"] as? String).dropFirst("https://example.com".count))
            let token = String(path.dropFirst("/passkeys/".count))
            LeakWatch.secret(token)
            let options = try ConsolePasskeyTests.json(
                try await ConsolePasskeyTests.form(client, path + "/options", [:], origin: "https://example.com"))
            var authenticator = SoftwareAuthenticator()
            let registration = authenticator.register(
                challenge: try ConsolePasskeyTests.bytes(options["challenge"]), userHandle: Data(user.id.utf8))
            let answer = ["credential": try ConsolePasskeyTests.text(registration.json)]

            // A node began an answer and stopped before it ended it.
            let store = PasskeyLinkStore(database: node.verity.database)
            #expect(try await store.startAnswer(tokenHash: SecretHash.hex(token), now: node.clock.now()))
            let held = try await ConsolePasskeyTests.form(client, path, answer, origin: "https://example.com")
            #expect(held.status == .gone, "one answer at a time, while the other's lease runs")
            #expect(
                try ConsolePasskeyTests.json(try await Self.read(link, node, client))["status"] as? String
                    == "answering")

            node.clock.advance(by: PasskeyLink.answerLease + 1)
            #expect(
                try ConsolePasskeyTests.json(try await Self.read(link, node, client))["status"] as? String == "pending")
            let done = try await ConsolePasskeyTests.form(client, path, answer, origin: "https://example.com")
            #expect(done.status == .ok)
            let read = try ConsolePasskeyTests.json(try await Self.read(link, node, client))
            #expect(read["status"] as? String == "completed")
            let stored = try await node.verity.passkeys.passkeys(userId: user.id, in: try await Self.project(node))
            #expect(stored.count == 1)
            #expect(read["passkeyId"] as? String == stored.first?.id)
        }
    }

    @Test("The page speaks the browser's first language among English, Spanish, French and German; English otherwise")
    func language() async throws {
        let (node, user) = try await Self.node(.sqlite)
        try await node.run { client in
            let link = try ConsolePasskeyTests.json(
                try await Self.create(#"{"ceremony":"registration","userId":"\#(user.id)"}"#, node, client))
            let path = String(try #require(link["url"] as? String).dropFirst("https://example.com".count))
            LeakWatch.secret(String(path.dropFirst("/passkeys/".count)))
            func page(_ languages: String) async throws -> String {
                String(
                    buffer: try await client.execute(
                        uri: path, method: .get, headers: [.acceptLanguage: languages]
                    ).body)
            }
            let french = try await page("fr-CA,fr;q=0.9,en;q=0.8")
            #expect(french.contains(#"<html lang="fr">"#))
            #expect(french.contains("<h1>Ajouter une clé d&#39;accès</h1>"))
            #expect(french.contains(#"data-msg-passkey-not-used="Aucune clé d"#))
            #expect(french.contains("data-msg-refused="))
            let english = try await page("pt-BR,pt;q=0.9")
            #expect(english.contains(#"<html lang="en">"#) && english.contains("<h1>Add a passkey</h1>"))
            #expect(english.contains("data-msg-passkey-not-used=") && !english.contains("data-msg-refused="))
            let gone = String(
                buffer: try await client.execute(
                    uri: "/passkeys/vpk_unknown", method: .get, headers: [.acceptLanguage: "de-DE"]
                ).body)
            #expect(gone.contains("Dieser Link ist abgelaufen oder wurde bereits verwendet."))
            // Every language has every line; English alone leaves a server's refusal in the server's words.
            for (language, lines) in HostedPageText.byLanguage {
                let missing = HostedPageText.Line.allCases.filter { lines[$0] == nil }
                #expect(missing == (language == "en" ? [.refused] : []), "\(language)")
            }
        }
    }

    @Test("A link is refused while the public URL's origin is not among the project's passkey origins")
    func originNotAmongProjects() async throws {
        let (node, user) = try await Self.node(.sqlite, publicURL: "https://verity.other.test")
        try await node.run { client in
            let refused = try await Self.create(#"{"ceremony":"registration","userId":"\#(user.id)"}"#, node, client)
            #expect(refused.status == .forbidden)
        }
    }

    // MARK: - Helpers

    /// A node on `publicURL` whose project has the test relying party (`example.com`), and a user in it.
    static func node(_ engine: TestEngine, publicURL: String = "https://example.com") async throws -> (TestNode, User) {
        let node = try await TestNode.make(engine, configure: { $0.publicURL = publicURL })
        let change = try ProjectSettingsChange(PasskeyProjectSettingsTests.change)
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        let user = try await node.verity.users.create(
            CreateUserRequest(loginIds: ["ada@example.com"]), in: try await project(node))
        return (node, user)
    }

    static func project(_ node: TestNode) async throws -> Project {
        try await node.verity.admin.project(id: node.project.id)
    }

    static func create(_ json: String, _ node: TestNode, _ client: some TestClientProtocol) async throws
        -> TestResponse
    {
        try await client.send(.post, "/v1/passkey-links", key: node.apiKey, json: json)
    }

    static func read(_ link: [String: Any], _ node: TestNode, _ client: some TestClientProtocol) async throws
        -> TestResponse
    {
        try await client.send(.get, "/v1/passkey-links/\(link["id"] as? String ?? "")", key: node.apiKey)
    }
}
