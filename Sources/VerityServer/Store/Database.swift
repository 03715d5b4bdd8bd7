import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import PostgresKit
import PostgresNIO
import SQLKit
import SQLiteKit

/// A handle on the database: statements and short explicit transactions, whichever engine is behind it.
///
/// Every store runs its SQL through ``execute(_:)``, ``lookup(_:)`` or ``transaction(_:)``; nothing else touches a
/// connection.
public final class Database: Sendable {
    public let engine: DatabaseEngine
    /// API keys' projects kept between requests: on PostgreSQL while ``followKeyChanges()`` hears every change to
    /// them, on SQLite checked against the change count a request reads first.
    let apiKeyCache = APIKeyCache()
    private let backend: any DatabaseBackend
    private let uses = NIOLockedValueBox(Uses())

    /// The statements and transactions under way, and whether ``close()`` has begun.
    private struct Uses {
        var inFlight = 0
        var isClosing = false
        /// ``close()``, waiting for the last one to end.
        var closer: CheckedContinuation<Void, Never>?
    }

    private init(engine: DatabaseEngine, backend: any DatabaseBackend) {
        self.engine = engine
        self.backend = backend
    }

    /// Opens the database and brings its schema up to date.
    public static func open(_ location: DatabaseLocation, logger: Logger) async throws -> Database {
        let database: Database
        switch location {
        case .sqliteFile(let path):
            database = Database(
                engine: .sqlite, backend: try await SQLiteBackend.open(path: path, logger: logger))
        case .sqliteMemory:
            database = Database(engine: .sqlite, backend: try await SQLiteBackend.open(path: nil, logger: logger))
        case .postgres(let url, let schema, let maxConnections, let idleTimeout, let startupWait):
            database = Database(
                engine: .postgres,
                backend: try await PostgresBackend.open(
                    url: url, schema: schema, maxConnections: maxConnections, idleTimeout: idleTimeout,
                    startupWait: startupWait, logger: logger))
        }
        do {
            try await Migrations.run(on: database, logger: logger)
        } catch {
            try? await database.close()
            throw error
        }
        return database
    }

    /// Runs statements on the writer outside an explicit transaction (each statement commits on its own): reads
    /// that must see the newest commit, and single-statement writes.
    public func execute<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await using { try await backend.withDatabase(body) }
    }

    /// Runs read-only statements on a reader connection where the engine has them (an SQLite file has two, beside
    /// its one writer), so hot-path lookups do not queue behind writes. What they see is committed data; for a row a
    /// client may ask for right after creating it, use ``lookupConfirmingMiss(_:)``.
    public func lookup<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await using { try await backend.withReader(body) }
    }

    /// A ``lookup(_:)`` whose miss is checked again on the writer, for rows a client may ask for right after they
    /// were created (a flow's token, a new session, a new key).
    ///
    /// Under load a reader connection was seen to miss a row committed just before (1 in 5 569 possession flows in a
    /// benchmark got a 401 on the step right after their 201), because two tasks shared a reader and the second
    /// statement read in the first one's snapshot. Readers are now used by one task at a time; re-reading a miss on
    /// the writer stays as the authoritative answer, and costs a second query only when the row is really absent.
    public func lookupConfirmingMiss<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T?)
        async throws -> T?
    {
        try await using {
            if let found = try await backend.withReader(body) { return found }
            return try await backend.withDatabase(body)
        }
    }

    /// Runs `SELECT 1` on the writer: whether this node can use its database now (`GET /ready`). Throws what the
    /// engine throws when it cannot.
    public func ping() async throws {
        try await execute { try await $0.raw("SELECT 1").run() }
    }

    /// Writes a consistent copy of the SQLite database to the new file `path`, readable by its owner only: a
    /// snapshot of the last commit (`VACUUM INTO`), taken while the server keeps reading and writing. What
    /// `verity admin backup` runs. The copy's secrets stay sealed with the node's master key.
    ///
    /// - Throws: ``ConfigurationError`` on PostgreSQL (back it up with `pg_dump`) or when `path` exists; the
    ///   engine's error when the copy fails, and then no file is left behind.
    public func backUp(to path: String) async throws {
        guard engine == .sqlite else {
            throw ConfigurationError("verity admin backup copies SQLite databases; back up PostgreSQL with pg_dump.")
        }
        let files = FileManager.default
        guard !files.fileExists(atPath: path) else {
            throw ConfigurationError("\(path) exists; name a new file for the backup.")
        }
        // VACUUM INTO takes an empty file, so it is made first with the mode the copy must have.
        guard files.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("\(path) cannot be created; check that its folder exists and is writable.")
        }
        do {
            try await execute { try await $0.raw("VACUUM INTO \(bind: path)").run() }
        } catch {
            try? files.removeItem(atPath: path)
            throw error
        }
    }

    /// Copies what the write-ahead log holds into the SQLite file, off the request path: the server calls it every
    /// quarter of a second (see `DatabaseService`), because the connections never checkpoint as part of a commit.
    public func checkpoint() async throws {
        try await backend.checkpoint()
    }

    /// Listens for changes to API keys and projects until cancelled, so that ``apiKeyCache`` may be used on
    /// PostgreSQL: the server runs it beside its requests; a CLI command does not, and looks every key up. Returns at
    /// once on SQLite, which cannot hear another process's writes (a request reads their count instead).
    public func followKeyChanges() async {
        await backend.followKeyChanges(into: apiKeyCache)
    }

    /// Runs `body` in one transaction: all its writes commit together or not at all.
    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await using { try await backend.withTransaction(body) }
    }

    /// Runs `work` as one use of the database, refused once ``close()`` has begun; `close()` waits for it to end.
    private func using<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        try uses.withLockedValue { uses in
            guard !uses.isClosing else { throw DatabaseClosedError() }
            uses.inFlight += 1
        }
        defer {
            let closer = uses.withLockedValue { uses -> CheckedContinuation<Void, Never>? in
                uses.inFlight -= 1
                guard uses.inFlight == 0, let closer = uses.closer else { return nil }
                uses.closer = nil
                return closer
            }
            closer?.resume()
        }
        return try await work()
    }

    /// Closes every connection once the statements and transactions under way have ended; any begun after this
    /// call throws ``DatabaseClosedError``. (Closing a PostgreSQL pool under a statement being prepared could leave
    /// that statement waiting for ever, and with it the service that ran it and the server's shutdown.) Safe to call
    /// more than once, and it finishes even when the calling task is being cancelled (a shutdown after a failure
    /// must still close the file cleanly).
    public func close() async throws {
        let alreadyClosing = uses.withLockedValue { uses in
            defer { uses.isClosing = true }
            return uses.isClosing
        }
        guard !alreadyClosing else { return }
        await withCheckedContinuation { continuation in
            let idle = uses.withLockedValue { uses in
                guard uses.inFlight > 0 else { return true }
                uses.closer = continuation
                return false
            }
            if idle { continuation.resume() }
        }
        let backend = self.backend
        try await Task { try await backend.close() }.value
    }

    // MARK: - Dialect differences, named once

    /// The scalar minimum function (`min` in SQLite, `LEAST` in PostgreSQL).
    var leastFunction: String {
        switch engine {
        case .sqlite: "min"
        case .postgres: "LEAST"
        }
    }

    /// The clause that lets several nodes claim disjoint rows (PostgreSQL only; SQLite has one writer).
    var skipLockedClause: String {
        switch engine {
        case .sqlite: ""
        case .postgres: "FOR UPDATE SKIP LOCKED"
        }
    }
}

// MARK: - SQLite

// MARK: - PostgreSQL
