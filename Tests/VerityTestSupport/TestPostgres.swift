import Foundation
import Logging
import PostgresKit
import PostgresNIO

/// The PostgreSQL database a test process uses: one per process, `<database>_p<pid>` beside the database that
/// `VERITY_TEST_POSTGRES_URL` names, each test in a schema of its own.
///
/// A run makes some 700 schemas of 40 tables; left behind, a few dozen runs fill a disk, and dropping them one by one
/// would take minutes. A database of its own is dropped in one statement: ``prepare()`` drops those of processes that
/// are gone and creates this one, so the URL's user must be allowed to create databases.
public enum TestPostgres {
    /// `VERITY_TEST_POSTGRES_URL`, if set: the server, user and database tests start from.
    public static let baseURL: String? = ProcessInfo.processInfo.environment["VERITY_TEST_POSTGRES_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// This process's database, as a URL like the base one (nil without one).
    public static let url: String? = baseURL.flatMap { base in
        guard var components = URLComponents(string: base), let name = databaseName else { return nil }
        components.path = "/" + name
        return components.string
    }

    /// Creates this process's database, once, after dropping those of finished runs. A test awaits it before it
    /// opens ``url``.
    public static func prepare() async throws {
        try await preparation.value
    }

    /// Runs `body`, which opens a database at ``url`` (and migrates it), after ``prepare()`` and while at most four
    /// other opens run.
    ///
    /// Swift Testing starts every test at once: some 300 tests then each held a connection, migrating, and a run
    /// came near the server's limit (300), past which connections fail. Opened, a test server's connections close
    /// after a short idle time (``idleTimeout``), so those waiting for ``ServerGate`` hold none.
    public static func opening<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await prepare()
        return try await openings.run(body)
    }

    /// How long a test server's unused connection stays open.
    public static let idleTimeout = Duration.seconds(1)

    private static let openings = Gate(capacity: 4)

    private static let preparation = Task<Void, any Error> {
        guard let baseURL, let databaseName, let prefix = baseDatabase.map({ $0 + "_p" }) else { return }
        let configuration = try SQLPostgresConfiguration(url: baseURL).coreConfiguration
        let logger = Logger(label: "verity-test-postgres")
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let rows = try await connection.query("SELECT datname FROM pg_database", logger: logger).collect()
            for row in rows {
                let name = try row.decode(String.self)
                let pid = name.dropFirst(prefix.count)
                guard name.hasPrefix(prefix), Int(pid) != nil, !ScratchSpace.isRunning(String(pid)) else { continue }
                try await connection.query(
                    PostgresQuery(unsafeSQL: #"DROP DATABASE "\#(name)" WITH (FORCE)"#), logger: logger)
            }
            try await connection.query(PostgresQuery(unsafeSQL: #"CREATE DATABASE "\#(databaseName)""#), logger: logger)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The database the base URL names.
    private static let baseDatabase: String? = baseURL.flatMap {
        try? SQLPostgresConfiguration(url: $0).coreConfiguration.database
    }

    private static let databaseName: String? = baseDatabase.map { "\($0)_p\(getpid())" }
}
