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

/// The two storage engines behind the one store API.
public enum DatabaseEngine: String, Sendable {
    /// The embedded default: one SQLite file in WAL mode.
    case sqlite
    /// A shared PostgreSQL server, for several nodes.
    case postgres
}

/// A statement or transaction begun after ``Database/close()``.
public struct DatabaseClosedError: Error, CustomStringConvertible {
    public var description: String { "The database is closed." }
}

/// Where the data lives.
public enum DatabaseLocation: Sendable, Equatable {
    /// An SQLite file.
    case sqliteFile(path: String)
    /// A private in-memory SQLite database (tests).
    case sqliteMemory
    /// A PostgreSQL server, optionally confined to one schema (tests use a fresh schema each), with at most
    /// `maxConnections` pooled connections from this process, each closed after `idleTimeout` unused (tests keep it
    /// short: hundreds of test servers share one PostgreSQL and its connection limit).
    /// At start-up the server waits up to `startupWait` for PostgreSQL to accept connections (it may still be
    /// starting); a refusal by the server itself (no such database or role, a wrong password) fails at once.
    case postgres(
        url: String, schema: String? = nil, maxConnections: Int = 20, idleTimeout: Duration = .seconds(60),
        startupWait: Duration = .seconds(30))
}

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

protocol DatabaseBackend: Sendable {
    func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T
    /// Moves committed pages out of the write-ahead log into the database file without blocking anyone (SQLite);
    /// nothing for PostgreSQL, which checkpoints by itself.
    func checkpoint() async throws
    /// Empties `cache` on every change to a key or a project, and keeps it in use while the changes are heard.
    func followKeyChanges(into cache: APIKeyCache) async
    func close() async throws
}

// MARK: - SQLite

/// One SQLite writer connection, used by one task at a time, and on a file two readers and a checkpointer beside it.
///
/// SQLite has a single writer anyway; funnelling every write through one connection behind a lock makes
/// transactions on it safe (no other task's statement can land inside them) and keeps `SQLITE_BUSY` out of the
/// server. Other processes (the CLI) wait on `busy_timeout`. Statements run on the task's own thread
/// (``SQLiteInlineConnection``): a named state change is one job on a connection, with no hop per statement.
final class SQLiteBackend: DatabaseBackend {
    private let connection: SQLiteInlineConnection
    private let lock = AsyncLock()
    /// Query-only connections to the same file (none for an in-memory database), taken in turn, each by one task at
    /// a time.
    private let readers: [(connection: SQLiteInlineConnection, lock: AsyncLock)]
    private let nextReader = NIOLockedValueBox(0)
    /// The connection that checkpoints the write-ahead log (file storage only), used by one checkpoint at a time.
    private let checkpointer: NIOLockedValueBox<SQLiteInlineConnection>?
    /// The database file (nil in memory).
    private let path: String?

    private static let readerCount = 2

    private init(
        connection: SQLiteInlineConnection, readers: [SQLiteInlineConnection] = [],
        checkpointer: SQLiteInlineConnection? = nil, path: String? = nil
    ) {
        self.connection = connection
        self.path = path
        self.readers = readers.map { ($0, AsyncLock()) }
        self.checkpointer = checkpointer.map(NIOLockedValueBox.init)
    }

    /// Opens the file at `path`, or a private in-memory database for `nil`.
    static func open(path: String?, logger: Logger) async throws -> SQLiteBackend {
        // Opening reads the file and may recover a write-ahead log: off the request threads.
        try await NIOThreadPool.singleton.runIfActive {
            let connection = try configured(SQLiteInlineConnection(path: path, logger: logger), isFile: path != nil)
            guard path != nil else { return SQLiteBackend(connection: connection) }
            var readers: [SQLiteInlineConnection] = []
            do {
                for _ in 0..<readerCount {
                    let reader = try configured(SQLiteInlineConnection(path: path, logger: logger), isFile: true)
                    readers.append(reader)
                    try reader.execute("PRAGMA query_only = ON")
                }
                let checkpointer = try configured(SQLiteInlineConnection(path: path, logger: logger), isFile: true)
                return SQLiteBackend(
                    connection: connection, readers: readers, checkpointer: checkpointer, path: path)
            } catch {
                for reader in readers { reader.close() }
                connection.close()
                throw error
            }
        }
    }

    private static func configured(_ connection: SQLiteInlineConnection, isFile: Bool) throws
        -> SQLiteInlineConnection
    {
        do {
            if isFile {
                // WAL lets readers (the CLI, `outbox list`) run beside the server; NORMAL keeps every committed
                // transaction across a process crash (only an OS crash can lose the last ones).
                try connection.execute("PRAGMA journal_mode = WAL")
                try connection.execute("PRAGMA synchronous = NORMAL")
                // By default the commit that takes the log past 1,000 pages copies them into the file before it
                // returns: a pause of one request that grows with the database (a p99 of half a second at 10 million
                // verifications). The checkpointer connection does it in the background instead.
                try connection.execute("PRAGMA wal_autocheckpoint = 0")
                // 64 MB of page cache per connection instead of 2 MB, so the inner pages of the tables and indexes
                // stay cached at 10 million verifications and a check reads about one page from the file (with 2 MB
                // its p99 tripled at a million rows). Filled as pages are read: an idle server does not pay for it.
                try connection.execute("PRAGMA cache_size = -64000")
                // After a burst of writes the log is cut back to this size when it starts over, instead of keeping
                // the burst's size on disk.
                try connection.execute("PRAGMA journal_size_limit = 67108864")
            }
            try connection.execute("PRAGMA busy_timeout = 5000")
            try connection.execute("PRAGMA foreign_keys = ON")
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        guard !readers.isEmpty else { return try await withDatabase(body) }
        let index = nextReader.withLockedValue { next in
            defer { next = (next + 1) % readers.count }
            return next
        }
        let reader = readers[index]
        // One task at a time: a statement that starts while another is still active on the same connection joins
        // that statement's read transaction, and so its older snapshot; it could miss a row committed in between.
        return try await reader.lock.withLock { try await body(reader.connection.sql) }
    }

    func checkpoint() async throws {
        guard let checkpointer else { return }
        // PASSIVE copies what no reader still needs and never waits for, or blocks, the writer or the readers. It
        // writes and syncs the file: on the thread pool, not on a request's thread.
        let passive = {
            try await NIOThreadPool.singleton.runIfActive {
                try checkpointer.withLockedValue { try Self.passiveCheckpoint($0) }
            }
        }
        var pass = try await passive()
        guard pass.logged >= Self.restartFrames else { return }
        // The passes leave the copied pages to the kernel (a passive pass that cannot copy everything does not
        // sync the file); RESTART syncs the file, and at 10 million rows that write-back, scattered over gigabytes,
        // took hundreds of milliseconds while everyone was held. So each pass is synced here, holding no one.
        let sync = { [path] in
            guard let path else { return }
            try await NIOThreadPool.singleton.runIfActive {
                guard let file = FileHandle(forReadingAtPath: path) else { return }
                try? file.synchronize()
                try? file.close()
            }
        }
        try await sync()
        // Catch up before holding anyone: what RESTART copies and syncs while it holds the writer and the readers
        // is what was written during the last pass and its sync, so pass and sync again until a pass has little to
        // copy (at 10 million rows one pass over a quarter of a second of checks took long enough for the held copy
        // to push the p99 to 443 ms; with one sync after all the passes, what was written during that sync still
        // made the p99 3.3 times that of 10 thousand rows).
        for _ in 0..<4 {
            let next = try await passive()
            defer { pass = next }
            try await sync()
            if next.copied - pass.copied < Self.heldCopyFrames { break }
        }
        // Under steady reads and writes the log never starts over by itself: a write may begin it again only once
        // every frame is in the file, and a passive pass must leave the frames that a reading statement's snapshot
        // still lacks (a benchmark grew it to 1.5 GB in 20 seconds). So, between two writes, RESTART copies what
        // the pass left (a quarter of a second's worth at most) and lets the next write start the log from its
        // beginning, reusing the file up to `journal_size_limit`.
        // The readers are held too: RESTART would otherwise wait for their statements in SQLite's busy handler,
        // which sleeps in steps of up to 100 ms while the writer is held (a check's p99 went to 726 ms at
        // 10 million rows); held here, they wait only for the copy.
        try await lock.withLock {
            try await Self.holding(readers[...]) {
                _ = try await NIOThreadPool.singleton.runIfActive {
                    try self.connection.run("PRAGMA wal_checkpoint(RESTART)", binds: []) { _ in }
                }
            }
        }
    }

    /// Runs `body` while holding every reader's lock, taken in order.
    private static func holding(
        _ readers: ArraySlice<(connection: SQLiteInlineConnection, lock: AsyncLock)>,
        _ body: @Sendable () async throws -> Void
    ) async throws {
        guard let first = readers.first else { return try await body() }
        try await first.lock.withLock { try await holding(readers.dropFirst(), body) }
    }

    /// A log shorter than this (about 4 MB) is left to start over by itself at the next quiet moment. (Restarting only
    /// past 64 MB made each held copy bigger: p99 60 ms at 10 million rows against 28 ms.)
    private static let restartFrames = 1_000

    /// A passive pass that copied fewer frames than this was short: the writes made meanwhile are few enough to copy
    /// while the writer and the readers are held.
    private static let heldCopyFrames = 500

    /// Runs a passive checkpoint on `connection`: how many frames the log holds and how many are now in the file.
    private static func passiveCheckpoint(_ connection: SQLiteInlineConnection) throws -> (logged: Int, copied: Int) {
        var frames = (logged: 0, copied: 0)
        try connection.run("PRAGMA wal_checkpoint(PASSIVE)", binds: []) { row in
            frames = (try row.decode(column: "log", as: Int.self), try row.decode(column: "checkpointed", as: Int.self))
        }
        return frames
    }

    func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock { try await body(connection.sql) }
    }

    func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await lock.withLock {
            // IMMEDIATE takes the write lock up front, so a concurrent CLI process cannot make us fail mid-way.
            // Through `run`, so that these three are prepared once like every other statement.
            try connection.run("BEGIN IMMEDIATE", binds: []) { _ in }
            do {
                let result = try await body(connection.sql)
                try connection.run("COMMIT", binds: []) { _ in }
                return result
            } catch {
                try? connection.run("ROLLBACK", binds: []) { _ in }
                throw error
            }
        }
    }

    /// Nothing to hear: the CLI writes the file unseen, so a request reads the change count (`key_epoch`) instead.
    func followKeyChanges(into cache: APIKeyCache) async {}

    func close() async throws {
        for reader in readers { try await reader.lock.withLock { reader.connection.close() } }
        checkpointer?.withLockedValue { $0.close() }
        try await lock.withLock { connection.close() }
    }
}

// MARK: - PostgreSQL

/// A PostgresNIO connection pool, run by a task the backend owns.
final class PostgresBackend: DatabaseBackend {
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger: Logger

    private init(client: PostgresClient, runTask: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.runTask = runTask
        self.logger = logger
    }

    static func open(
        url: String, schema: String?, maxConnections: Int, idleTimeout: Duration, startupWait: Duration,
        logger: Logger
    ) async throws -> PostgresBackend {
        let parsed: SQLPostgresConfiguration
        do {
            parsed = try SQLPostgresConfiguration(url: url)
        } catch {
            throw ConfigurationError("The database URL is not a valid postgres:// URL.")
        }
        let core = parsed.coreConfiguration
        let tls: PostgresClient.Configuration.TLS =
            switch (core.tls.isEnforced, core.tls.isAllowed, core.tls.sslContext?.configuration) {
            case (true, _, let configuration?): .require(configuration)
            case (false, true, let configuration?): .prefer(configuration)
            default: .disable
            }
        guard let host = core.host else {
            throw ConfigurationError("The database URL must name a host.")
        }
        // The pool retries a failed connection without end, and without saying why to its callers.
        try await waitUntilReachable(core, address: "\(host):\(core.port ?? 5432)", for: startupWait, logger: logger)
        var configuration = PostgresClient.Configuration(
            host: host, port: core.port ?? 5432, username: core.username, password: core.password,
            database: core.database, tls: tls)
        // One more for the connection that listens for key changes (``followKeyChanges(into:)``).
        configuration.options.maximumConnections = max(1, maxConnections) + 1
        configuration.options.connectionIdleTimeout = idleTimeout
        let searchPath = schema ?? parsed.searchPath?.joined(separator: ",")
        if let schema {
            guard !schema.isEmpty, schema.count <= 63,
                schema.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
            else {
                throw ConfigurationError("A schema name must be 1 to 63 lowercase letters, digits or underscores.")
            }
        }
        if let searchPath {
            configuration.options.additionalStartupParameters = [("search_path", searchPath)]
        }
        // Statements are prepared once per connection (PreparingPostgresDatabase) but planned for their values each
        // time: a cached generic plan made the code check six times slower than no preparation at all.
        configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_custom_plan"))
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runTask = Task { await client.run() }
        let backend = PostgresBackend(client: client, runTask: runTask, logger: logger)
        // Give `run()` a moment to start: a lease before it has started works, but PostgresNIO warns about it.
        try? await Task.sleep(for: .milliseconds(20))
        do {
            // Fail at start-up, with the server's own words, rather than on the first request.
            _ = try await backend.withDatabase { try await $0.raw("SELECT 1").all() }
            if let schema {
                // The name was checked above to be a plain lowercase identifier. Under the schema's migration lock:
                // two `IF NOT EXISTS` at once can both try, and one fails on the catalog's unique index.
                try await backend.withTransaction { sql in
                    try await Migrations.lock(schema: schema, sql)
                    try await sql.raw("CREATE SCHEMA IF NOT EXISTS \(unsafeRaw: schema)").run()
                }
            }
        } catch {
            try? await backend.close()
            throw ConfigurationError("Cannot reach PostgreSQL at \(host): \(String(reflecting: error))")
        }
        return backend
    }

    /// Connects once, retrying each second for up to `wait` while PostgreSQL cannot be reached or says it is
    /// starting; any other refusal (no such database or role, a wrong password, no TLS) ends at once.
    private static func waitUntilReachable(
        _ configuration: PostgresConnection.Configuration, address: String, for wait: Duration, logger: Logger
    ) async throws(ConfigurationError) {
        let deadline = ContinuousClock.now + wait
        for attempt in 1... {
            let reason: String
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration, id: attempt, logger: logger)
                try? await connection.close()
                return
            } catch let error as PSQLError {
                let starting = error.serverInfo?[.sqlState] == "57P03"  // cannot_connect_now: starting up
                if error.code == .sslUnsupported {
                    throw ConfigurationError(
                        "PostgreSQL at \(address) does not offer TLS, which the database URL requires (sslmode).")
                }
                guard [.connectionError, .serverClosedConnection].contains(error.code) || starting else {
                    throw ConfigurationError(
                        "PostgreSQL at \(address) refused the connection: \(error.serverInfo?[.message] ?? "\(error.code)")."
                    )
                }
                reason = Self.reason(error)
            } catch {
                reason = "\(error)"
            }
            logger.warning("Waiting for PostgreSQL", metadata: ["address": "\(address)", "error": "\(reason)"])
            guard ContinuousClock.now < deadline else {
                throw ConfigurationError("Cannot reach PostgreSQL at \(address): \(reason) (waited \(wait)).")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// "Connection refused", "the host does not resolve": the system's words for a failed connection.
    private static func reason(_ error: PSQLError) -> String {
        guard let connection = error.underlying as? NIOConnectionError else {
            return error.serverInfo?[.message] ?? "\(error.code)"
        }
        if let io = connection.connectionErrors.last?.error as? IOError {
            return String(cString: strerror(io.errnoCode))
        }
        return connection.connectionErrors.isEmpty ? "the host does not resolve" : "\(connection)"
    }

    func withDatabase<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await client.withConnection { connection in
            try await body(PreparingPostgresDatabase(connection))
        }
    }

    func withReader<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await withDatabase(body)
    }

    func withTransaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await body(PreparingPostgresDatabase(connection))
            }
        } catch let error as PostgresTransactionError {
            // PostgresNIO wraps what the body threw (after rolling back); callers get it as SQLite gives it.
            if let thrown = error.closureError { throw thrown }
            throw error
        }
    }

    func checkpoint() async throws {}

    /// Holds one connection that listens on ``APIKeyCache/channel`` (fed by the triggers of migration 21) and sends
    /// itself a probe every ``APIKeyCache/probeInterval``; reconnects after a second when the connection is lost.
    func followKeyChanges(into cache: APIKeyCache) async {
        let probe = "probe-" + UUID().uuidString
        let logger = self.logger
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    // A change names its table's schema; servers of other schemas in the same database ignore it.
                    let schema = try await connection.query("SELECT current_schema() AS name", logger: logger)
                        .collect().first?.decode(String?.self)
                    try await connection.listen(on: APIKeyCache.channel) { notifications in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                while !Task.isCancelled {
                                    _ = try await connection.query(
                                        "SELECT pg_notify(\(APIKeyCache.channel), \(probe))", logger: logger
                                    ).collect()
                                    try await Task.sleep(for: APIKeyCache.probeInterval)
                                }
                            }
                            group.addTask {
                                for try await notification in notifications {
                                    if notification.payload == probe {
                                        cache.heardProbe()
                                    } else if !notification.payload.hasPrefix("probe-"),
                                        schema == nil || notification.payload == schema
                                    {
                                        cache.changed()
                                    }
                                }
                            }
                            // Whichever ends first (the connection failed, or shutdown) ends the other.
                            try await group.next()
                            group.cancelAll()
                        }
                    }
                }
            } catch  where !Task.isCancelled {
                logger.warning(
                    "Lost the channel of API-key changes; every request looks its key up until it is back",
                    metadata: ["error": "\(String(reflecting: error))"])
            } catch {}
            cache.stoppedListening()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    func close() async throws {
        runTask.cancel()
        await runTask.value
    }
}
