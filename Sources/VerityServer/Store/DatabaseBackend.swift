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
