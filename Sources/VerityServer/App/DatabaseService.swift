import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle

/// Keeps the database in shape while the server runs (checkpoints; API-key changes heard), and closes it after
/// everything started after it (the worker, the HTTP server) has stopped.
struct DatabaseService: Service, CustomStringConvertible {
    let database: Database
    let metrics: VerityMetrics

    /// Just the name, for ServiceLifecycle's debug log.
    var description: String { "DatabaseService" }

    func run() async throws {
        let database = self.database
        await withTaskGroup(of: Void.self) { group in
            // On PostgreSQL, hear every change to API keys, so their look-ups can be cached (APIKeyCache).
            group.addTask { await database.followKeyChanges() }
            // Checkpoint the SQLite write-ahead log four times a second until shutdown (the commits themselves never
            // do): under heavy writes a quarter of a second of log fits in the 64 MB the file is kept to.
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                try? await database.checkpoint()
                metrics.setKeyChangesHeard(database.apiKeyCache.isListening)
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .milliseconds(250)) }
            }
            group.cancelAll()
        }
        try? await database.checkpoint()
        try await database.close()
    }
}
