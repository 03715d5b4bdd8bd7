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
