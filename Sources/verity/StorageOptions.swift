import ArgumentParser
import Foundation
import Logging
import VerityServer

/// Where the data lives; shared by every command that opens the database.
struct StorageOptions: ParsableArguments {
    @Option(help: "Directory for the SQLite file and the master key (env: VERITY_DATA_DIR).")
    var dataDir: String?

    @Option(
        help: "postgres://user:password@host:5432/db to use PostgreSQL instead of SQLite (env: VERITY_DATABASE_URL).")
    var databaseURL: String?

    /// The configuration from the defaults, then the environment, then these flags.
    func configuration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: ProcessInfo.processInfo.environment)
        if let dataDir { configuration.dataDirectory = dataDir }
        if let databaseURL { configuration.databaseURL = databaseURL }
        return configuration
    }

    /// Opens the node's stores for a one-off command; the caller closes the database.
    ///
    /// - Parameter creating: Whether the command may make a new SQLite database (creating a project or an operator
    ///   may come before the first `verity serve`); any other command refuses a data directory without one, so a
    ///   mistyped `--data-dir` is not read as an empty database.
    func open(creating: Bool = false, logLevel: Logger.Level = .warning) async throws -> Verity {
        var configuration = try configuration()
        configuration.logLevel = logLevel
        if !creating, case .sqliteFile(let path) = try configuration.databaseLocation,
            !FileManager.default.fileExists(atPath: path)
        {
            throw ConfigurationError(
                "There is no database at \(path): name its folder with --data-dir (VERITY_DATA_DIR), or start "
                    + "`verity serve` there first.")
        }
        return try await Verity.open(configuration)
    }
}

/// Runs `body` with the opened stores and closes the database whatever happens. Only a `creating` command may make a
/// new database (``StorageOptions/open(creating:logLevel:)``).
func withVerity<T>(_ storage: StorageOptions, creating: Bool = false, _ body: (Verity) async throws -> T)
    async throws -> T
{
    let verity = try await storage.open(creating: creating)
    do {
        let result = try await body(verity)
        try await verity.database.close()
        return result
    } catch {
        try? await verity.database.close()
        throw error
    }
}

/// Prints a value as pretty JSON with RFC 3339 dates.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
