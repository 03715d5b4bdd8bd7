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
