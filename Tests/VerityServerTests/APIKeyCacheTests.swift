import Foundation
import HummingbirdTesting
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// API-key look-ups are cached on PostgreSQL only while the server hears every change to keys and projects; a
/// revocation anywhere (another node, the CLI) must still take effect at once.
@Suite("API-key cache")
struct APIKeyCacheTests {
    private static func found(_ name: String) -> (project: Project, keyId: String) {
        (Project(id: "prj_\(name)", name: name, settings: .init(), createdAt: Date()), "key_\(name)")
    }

    @Test("Used only while the channel is heard; a look-up that raced a change is not kept")
    func cacheRules() throws {
        let cache = APIKeyCache()
        #expect(cache.ticket() == nil)
        cache.heardProbe()
        cache.remember(Self.found("a"), hash: "h1", ticket: try #require(cache.ticket()))
        #expect(cache.lookup(hash: "h1")?.keyId == "key_a")

        // A change empties it, and a look-up that started before the change is not kept.
        let raced = cache.ticket()!
        cache.changed()
        #expect(cache.lookup(hash: "h1") == nil)
        cache.remember(Self.found("b"), hash: "h2", ticket: raced)
        #expect(cache.lookup(hash: "h2") == nil)

        // Losing the channel turns it off, and what was kept is gone when it is heard again.
        cache.remember(Self.found("c"), hash: "h3", ticket: cache.ticket()!)
        cache.stoppedListening()
        #expect(cache.lookup(hash: "h3") == nil && cache.ticket() == nil)
        cache.heardProbe()
        #expect(cache.lookup(hash: "h3") == nil && cache.count == 0)
    }

    @Test(
        "A revocation or a project change by another process reaches a server that keeps keys",
        arguments: [TestEngine.sqliteFile] + TestEngine.available.filter { $0 == .postgres })
    func changeByAnotherProcess(engine: TestEngine) async throws {
        let server = try await TestNode.make(engine, location: engine.persistentLocation())
        // Other connections to the same database, outside the server: what `verity admin` elsewhere is.
        let other = try await server.reopened()
        let second = try await server.verity.admin.createKey(projectId: server.project.id, name: "second")
        LeakWatch.secret(second.secret)
        // On SQLite a request reads the change count (`key_epoch`) first, so a change holds from the next request;
        // on PostgreSQL the server hears of it when PostgreSQL delivers the notification (milliseconds).
        let settled = engine == .postgres ? Self.waitFor : Self.atOnce
        try await server.run { client in
            let cache = server.verity.database.apiKeyCache
            // An operator sees on `/metrics` whether the node hears the channel (never on SQLite).
            let heard = engine == .postgres ? 1 : 0
            try await Self.waitFor("verity_api_key_changes_heard \(heard)") {
                let metrics = try await client.send(.get, "/metrics", key: nil)
                return String(buffer: metrics.body).split(separator: "\n").contains {
                    $0.hasPrefix("verity_api_key_changes_heard ")
                        && Double($0.split(separator: " ").last ?? "") == Double(heard)
                }
            }
            #expect(cache.isListening == (engine == .postgres))
            for key in [server.apiKey, second.secret, second.secret] {
                let answer = try await client.send(.get, "/v1/project", key: key)
                #expect(answer.status == .ok)
            }
            #expect(cache.count == 2)

            try await other.verity.admin.revokeKey(id: second.key.id, projectId: server.project.id)
            try await settled("the revoked key to be refused") {
                try await client.send(.get, "/v1/project", key: second.secret).status == .unauthorized
            }
            // The kept key carries its project: a change to the project is heard the same way.
            _ = try await other.verity.admin.updateProject(id: server.project.id, name: "Renamed") { _ in }
            try await settled("the new name") {
                try await client.send(.get, "/v1/project", key: server.apiKey).decode(ProjectSummary.self).name
                    == "Renamed"
            }

            // A revocation made by the server itself holds from its very next request.
            let third = try await server.verity.admin.createKey(projectId: server.project.id, name: "third")
            LeakWatch.secret(third.secret)
            let before = try await client.send(.get, "/v1/project", key: third.secret)
            #expect(before.status == .ok)
            try await server.verity.admin.revokeKey(id: third.key.id, projectId: server.project.id)
            let after = try await client.send(.get, "/v1/project", key: third.secret)
            #expect(after.status == .unauthorized)
        }
        try await other.verity.database.close()
    }

    private static func atOnce(_ what: String, _ condition: () async throws -> Bool) async throws {
        #expect(try await condition(), "\(what)")
    }

    private static func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<200 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("Waited 5 s for \(what)")
    }
}
