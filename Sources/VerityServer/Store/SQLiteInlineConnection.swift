import CVeritySQLite
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import VaporCSQLite

/// One SQLite connection whose statements run on the calling thread, as an `SQLDatabase` for the stores.
///
/// SQLiteNIO runs every statement as a job on its thread pool and completes it on an event loop, so each statement
/// of a state change costs three thread switches; a push round trip of eighteen statements paid more for the hops
/// than for SQLite (bench/README.md has the profile). Here the whole named state change runs where its task runs:
/// one hop in (the backend's lock), every statement, the commit, one hop out — the job model of GRDB's
/// `DatabasePool`, over the SQLite that SQLiteNIO already compiles into the binary (GRDB would need the system's
/// `libsqlite3-dev`, which a machine with only Swift does not have). Statements are prepared once and kept.
///
/// Not thread-safe: the backend gives a connection to one task at a time.
final class SQLiteInlineConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// Prepared statements by their SQL text, reset and reused.
    private var statements: [String: OpaquePointer] = [:]
    private let logger: Logger

    /// Past this many distinct statements the cache starts over (the stores write a few dozen; this bounds a
    /// pathological caller).
    private static let statementCacheLimit = 512

    private static let initialized: Void = { _ = sqlite_nio_sqlite3_initialize() }()

    /// Opens `path` (or a private in-memory database for `nil`).
    init(path: String?, logger: Logger) throws {
        _ = Self.initialized
        self.logger = logger
        let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var opened: OpaquePointer?
        let status = sqlite_nio_sqlite3_open_v2(path ?? ":memory:", &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite_nio_sqlite3_close(opened)
            throw SQLiteStatementError(code: status, message: "cannot open the database: \(message)")
        }
        // Plans stay as prepared whatever the bound values: otherwise a parameter compared with a column makes SQLite
        // prepare the statement again for each new value, which was 7% of a check's time.
        let stability = verity_sqlite_enable_query_planner_stability(UnsafeMutableRawPointer(opened))
        guard stability == SQLITE_OK else {
            sqlite_nio_sqlite3_close(opened)
            throw SQLiteStatementError(code: stability, message: "cannot keep query plans stable")
        }
        handle = opened
    }

    deinit { close() }

    /// The connection as the stores use it.
    var sql: any SQLDatabase { SQLiteInlineDatabase(connection: self, logger: logger) }

    /// Runs statements that take no parameters and return no rows (pragmas, `BEGIN`, `COMMIT`).
    func execute(_ text: String) throws {
        guard let handle else { throw SQLiteStatementError.closed }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite_nio_sqlite3_exec(handle, text, nil, nil, &message)
        guard status == SQLITE_OK else {
            let reason = message.map { String(cString: $0) } ?? String(cString: sqlite_nio_sqlite3_errmsg(handle))
            sqlite_nio_sqlite3_free(message)
            throw SQLiteStatementError(code: status, message: reason)
        }
    }

    /// Runs one statement with its parameters, handing each result row to `onRow`.
    func run(_ text: String, binds: [SQLiteData], onRow: (SQLiteResultRow) throws -> Void) throws {
        guard let handle else { throw SQLiteStatementError.closed }
        let statement = try prepared(text, on: handle)
        // Every run binds every parameter, so the old values need no clearing (clearing would also expire the
        // statement).
        defer { sqlite_nio_sqlite3_reset(statement) }
        for (offset, value) in binds.enumerated() {
            if case .text(let text) = value { try StoredText.check(text) }
            try check(bind(value, at: Int32(offset + 1), in: statement), on: handle)
        }
        var columns: SQLiteResultRow.Columns?
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else {
                throw SQLiteStatementError(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
            }
            let names = columns ?? SQLiteResultRow.Columns(statement)
            columns = names
            try onRow(
                SQLiteResultRow(
                    columns: names, values: (0..<Int32(names.names.count)).map { value(at: $0, in: statement) }))
        }
    }

    func close() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    private func prepared(_ text: String, on handle: OpaquePointer) throws -> OpaquePointer {
        if let statement = statements[text] { return statement }
        if statements.count >= Self.statementCacheLimit {
            for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
            statements = [:]
        }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(
            handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw SQLiteStatementError(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
        }
        statements[text] = statement
        return statement
    }

    private func check(_ status: Int32, on handle: OpaquePointer) throws {
        guard status == SQLITE_OK else {
            throw SQLiteStatementError(code: status, message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
        }
    }

    private func bind(_ value: SQLiteData, at index: Int32, in statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let integer): sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
        case .float(let double): sqlite_nio_sqlite3_bind_double(statement, index, double)
        case .null: sqlite_nio_sqlite3_bind_null(statement, index)
        case .text(let text):
            sqlite_nio_sqlite3_bind_text64(
                statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
        case .blob(let buffer):
            buffer.withUnsafeReadableBytes { bytes in
                sqlite_nio_sqlite3_bind_blob64(
                    statement, index, bytes.baseAddress, UInt64(bytes.count), Self.transient)
            }
        }
    }

    private func value(at column: Int32, in statement: OpaquePointer) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { return .null }
            return .text(String(cString: text))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, column) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count))
            }
            return .blob(buffer)
        default: return .null
        }
    }

    /// SQLite copies the bound bytes before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// ``SQLiteInlineConnection`` seen through SQLKit: every statement runs before `execute` returns.
private struct SQLiteInlineDatabase: SQLDatabase {
    let connection: SQLiteInlineConnection
    let logger: Logger

    var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.any() }
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void)
        -> EventLoopFuture<Void>
    {
        do {
            try run(query, onRow)
            return eventLoop.makeSucceededVoidFuture()
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try run(query, onRow)
    }

    /// One encoder for every statement (each `SQLiteDataEncoder()` allocates a `JSONEncoder`).
    private static let encoder = SQLiteDataEncoder()

    private func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        let (text, binds) = serialize(query)
        let encoder = Self.encoder
        try connection.run(text, binds: try binds.map { try encoder.encode($0) }) { onRow($0) }
    }
}
