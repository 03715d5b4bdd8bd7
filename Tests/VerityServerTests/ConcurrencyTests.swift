import Foundation
import HummingbirdTesting
import Logging
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Limits hold under concurrent requests over real HTTP: the database decides, never a read-then-write.
@Suite("Concurrency")
struct ConcurrencyTests {
    let phone = "+14155550100"

    @Test("100 concurrent wrong checks count exactly 5 attempts", arguments: TestEngine.available)
    func concurrentWrongChecks(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run(.live) { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            let wrong = wrongCode(for: try await node.sender.code(to: phone))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await client.check(id: id, code: wrong, key: node.apiKey).status.code }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 5)
            #expect(statuses.filter { $0 == 429 }.count == 95)
            let fetched = try await client.send(.get, "/v1/verifications/\(id)", key: node.apiKey)
            let verification = try fetched.decode(VerificationResponse.self)
            #expect(verification.checkAttempts == 5)
            #expect(verification.status == .maxAttemptsReached)
        }
    }

    @Test("50 concurrent checks with the right code approve exactly once", arguments: TestEngine.available)
    func concurrentRightChecks(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run(.live) { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            let code = try await node.sender.code(to: phone)
            let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let response = try await client.check(id: id, code: code, key: node.apiKey)
                        let valid = try response.status == .ok && response.decode(CheckVerificationResponse.self).valid
                        return (response.status.code, valid)
                    }
                }
                return try await group.reduce(into: [(Int, Bool)]()) { $0.append($1) }
            }
            #expect(results.filter { $0.1 }.count == 1)
            #expect(results.filter { $0.0 == 404 }.count == 49)
        }
    }

    @Test("Concurrent starts to one destination make one verification", arguments: TestEngine.available)
    func concurrentStarts(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run(.live) { client in
            let responses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        let response = try await client.startVerification(phone, key: node.apiKey)
                        return (response.status.code, try? response.decode(VerificationResponse.self).id)
                    }
                }
                return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
            }
            #expect(responses.filter { $0.0 == 201 }.count == 5)
            #expect(responses.filter { $0.0 == 429 }.count == 5)
            #expect(Set(responses.compactMap(\.1)).count == 1)
            try await node.sender.waitForMessages(to: phone, count: 5)
        }
    }

    @Test(
        "Nodes that start at once on an empty database migrate it once; nodes of two schemas migrate side by side",
        arguments: TestEngine.available.filter { $0 == .postgres })
    func concurrentMigrations(engine: TestEngine) async throws {
        try await TestPostgres.prepare()
        let schemas = [engine.persistentLocation(), engine.persistentLocation()]
        let versions = try await withThrowingTaskGroup(of: [Int].self) { group in
            for location in schemas + schemas + schemas {
                group.addTask {
                    let database = try await Database.open(location, logger: Logger(label: "test"))
                    let versions = try await database.execute { sql in
                        try await sql.raw("SELECT version FROM schema_migrations ORDER BY version").all().map {
                            try $0.decode(column: "version", as: Int.self)
                        }
                    }
                    try await database.close()
                    return versions
                }
            }
            return try await group.reduce(into: [[Int]]()) { $0.append($1) }
        }
        #expect(versions.count == 6)
        #expect(Set(versions) == [Migrations.all.map(\.version)])
    }

    @Test(
        "Closing the database waits for the transaction under way, which commits; what begins after is refused",
        // Waits for the transaction to begin however long a loaded machine takes to schedule it (a 10-second
        // wait timed out once on CI's two cores); the time limit still catches a close that never returns.
        .timeLimit(.minutes(1)), arguments: TestEngine.available.filter { $0 != .sqlite })
    func closeWaitsForWork(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let database = node.verity.database
        let (started, begin) = AsyncStream.makeStream(of: Void.self)
        let write = Task {
            try await database.transaction { sql in
                begin.yield()
                try await Task.sleep(for: .milliseconds(300))
                try await sql.raw("UPDATE projects SET name = 'Closed' WHERE id = \(bind: node.project.id)").run()
            }
        }
        for await _ in started { break }
        try await database.close()
        try await write.value
        await #expect(throws: DatabaseClosedError.self) {
            try await database.execute { try await $0.raw("SELECT 1").run() }
        }
        let reopened = try await Database.open(node.location, logger: Logger(label: "test"))
        let name = try await reopened.execute { sql in
            try await sql.raw("SELECT name FROM projects WHERE id = \(bind: node.project.id)").first()?.decode(
                column: "name", as: String.self)
        }
        try await reopened.close()
        #expect(name == "Closed")
    }
}
