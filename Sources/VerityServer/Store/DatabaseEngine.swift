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
