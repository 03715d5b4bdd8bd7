import Foundation
import Logging
import SQLKit
import Testing

@testable import VerityServer

/// The SQLite engine below the stores: statements run inline on prepared, reused statements, and the write-ahead log
/// stays bounded however busy the file is.
@Suite("SQLite engine")
struct SQLiteEngineTests {
    private static func openFile() async throws -> (Database, path: String) {
        guard case .sqliteFile(let path) = TestEngine.sqliteFile.freshLocation() else {
            throw CancellationError()
        }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let database = try await Database.open(.sqliteFile(path: path), logger: Logger(label: "test"))
        try await database.execute { sql in
            try await sql.raw("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE)").run()
        }
        return (database, path)
    }

    private static func walBytes(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "-wal")
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test("A refused statement leaves its prepared statement reusable, and a failed transaction writes nothing")
    func refusedStatementsAndRollback() async throws {
        let (database, _) = try await Self.openFile()
        defer { Task { try? await database.close() } }
        let insert: @Sendable (Int, String) async throws -> Void = { id, body in
            try await database.execute { sql in
                try await sql.raw("INSERT INTO notes (id, body) VALUES (\(bind: id), \(bind: body))").run()
            }
        }
        try await insert(1, "first")
        await #expect(throws: SQLiteStatementError.self) { try await insert(2, "first") }
        try await insert(2, "second")
        await #expect(throws: SQLiteStatementError.self) {
            try await database.transaction { sql in
                try await sql.raw("INSERT INTO notes (id, body) VALUES (3, 'third')").run()
                try await sql.raw("INSERT INTO notes (id, body) VALUES (4, 'first')").run()
            }
        }
        let bodies = try await database.lookup { sql in
            try await sql.raw("SELECT body FROM notes ORDER BY id").all().map {
                try $0.decode(column: "body", as: String.self)
            }
        }
        #expect(bodies == ["first", "second"])
    }

    @Test("Under steady reads and writes the write-ahead log starts over at each checkpoint instead of growing")
    func logStaysBounded() async throws {
        let (database, path) = try await Self.openFile()
        defer { Task { try? await database.close() } }
        let body = String(repeating: "x", count: 3_000)
        // Readers keep a statement on the log at almost every moment, as under load: a passive checkpoint alone
        // then never lets a write start the log over.
        let reading = Task {
            while !Task.isCancelled {
                _ = try? await database.lookup { sql in try await sql.raw("SELECT count(*) AS n FROM notes").all() }
            }
        }
        defer { reading.cancel() }
        var largest = 0
        for round in 0..<12 {
            for row in 0..<400 {
                let id = round * 400 + row
                try await database.transaction { sql in
                    try await sql.raw("INSERT INTO notes (id, body) VALUES (\(bind: id), \(bind: "\(id)\(body)"))")
                        .run()
                }
            }
            try await database.checkpoint()
            largest = max(largest, try Self.walBytes(path))
        }
        // 4,800 rows of 3 KB, each also a 3 KB index key, went through the log: about 125 MB when it never starts
        // over (measured with the restart turned off), about 12 MB, one round's worth, when it does.
        #expect(largest < 40_000_000, "the log grew to \(largest) bytes")
    }
}

/// The probe that bench/README.md compares with GRDB's `DatabasePool`: write jobs per second, each a read and a
/// conditional `UPDATE … RETURNING` in its own transaction, from 32 concurrent tasks, on a WAL file with
/// `synchronous = NORMAL`. A measurement, not a test: it runs only with `VERITY_ENGINE_PROBE=1` (best in release:
/// `VERITY_ENGINE_PROBE=1 swift test -c release --scratch-path .build-release --filter SQLiteEngineProbe`).
@Suite("SQLite engine probe")
struct SQLiteEngineProbe {
    @Test(
        "Write jobs per second from 32 tasks",
        .enabled(if: ProcessInfo.processInfo.environment["VERITY_ENGINE_PROBE"] == "1"))
    func writeJobs() async throws {
        guard case .sqliteFile(let path) = TestEngine.sqliteFile.freshLocation() else { return }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let database = try await Database.open(.sqliteFile(path: path), logger: Logger(label: "probe"))
        defer { Task { try? await database.close() } }
        let rows = 10_000
        try await database.transaction { sql in
            try await sql.raw("CREATE TABLE probe (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)").run()
            for id in 0..<rows { try await sql.raw("INSERT INTO probe (id, n) VALUES (\(bind: id), 0)").run() }
        }
        let jobsPerTask = 3_000
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<32 {
                group.addTask {
                    for job in 0..<jobsPerTask {
                        let id = (task * jobsPerTask + job) % rows
                        _ = try await database.transaction { sql in
                            _ = try await sql.raw("SELECT n FROM probe WHERE id = \(bind: id)").first()
                            return try await sql.raw(
                                "UPDATE probe SET n = n + 1 WHERE id = \(bind: id) AND n < 1000000 RETURNING n"
                            ).first()?.decode(column: "n", as: Int.self)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print(
            "engine probe: \(Int(Double(32 * jobsPerTask) / seconds)) write jobs/s (\(32 * jobsPerTask) in \(seconds) s)"
        )
    }
}
