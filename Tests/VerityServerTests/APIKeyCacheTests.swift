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

    @Test("On SQLite, nothing is cached: the CLI writes the file unseen")
    func sqliteNeverCaches() async throws {
        let node = try await TestNode.make(.sqliteFile)
        try await node.run { client in
            let answer = try await client.send(.get, "/v1/project", key: node.apiKey)
            #expect(answer.status == .ok)
            #expect(node.verity.database.apiKeyCache.count == 0)
            #expect(!node.verity.database.apiKeyCache.isListening)
        }
    }

    @Test("On PostgreSQL, a revocation or a project change from another process reaches a caching server")
    func revocationReachesEveryProcess() async throws {
        guard TestEngine.available.contains(.postgres) else { return }
        let server = try await TestNode.make(.postgres, location: TestEngine.postgres.persistentLocation())
        // A second handle on the same database, with its own pool: what `verity admin` run elsewhere is.
        let other = try await server.reopened()
        let second = try await server.verity.admin.createKey(projectId: server.project.id, name: "second")
        LeakWatch.secret(second.secret)
        try await server.run { client in
            let cache = server.verity.database.apiKeyCache
            try await Self.waitFor("the server to hear its channel") { cache.isListening }
            for key in [server.apiKey, second.secret] {
                #expect(try await client.send(.get, "/v1/project", key: key).status == .ok)
            }
            #expect(cache.count == 2)

            // Revoked by the other process: the server refuses the key as soon as PostgreSQL tells it.
            try await other.verity.admin.revokeKey(id: second.key.id, projectId: server.project.id)
            try await Self.waitFor("the revoked key to be refused") {
                try await client.send(.get, "/v1/project", key: second.secret).status == .unauthorized
            }

            // A project change is heard the same way (the cached key carries its project).
            #expect(try await client.send(.get, "/v1/project", key: server.apiKey).status == .ok)
            _ = try await other.verity.admin.updateProject(id: server.project.id, name: "Renamed") { _ in }
            try await Self.waitFor("the new name") {
                try await client.send(.get, "/v1/project", key: server.apiKey).decode(ProjectSummary.self).name
                    == "Renamed"
            }

            // A revocation made by the server itself takes effect on its very next request.
            let third = try await server.verity.admin.createKey(projectId: server.project.id, name: "third")
            LeakWatch.secret(third.secret)
            #expect(try await client.send(.get, "/v1/project", key: third.secret).status == .ok)
            try await server.verity.admin.revokeKey(id: third.key.id, projectId: server.project.id)
            #expect(try await client.send(.get, "/v1/project", key: third.secret).status == .unauthorized)
        }
        try await other.verity.database.close()
    }

    private static func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<200 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("Waited 5 s for \(what)")
    }
}
