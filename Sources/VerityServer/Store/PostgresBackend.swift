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
