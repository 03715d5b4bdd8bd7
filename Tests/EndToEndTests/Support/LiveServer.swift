import Foundation
import HummingbirdTesting
import Logging
import Testing
import VerityServer
import VerityTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The engines the end-to-end tests run on: SQLite always, PostgreSQL when `VERITY_TEST_POSTGRES_URL` is set.
enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    static var available: [TestEngine] {
        postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    static var postgresURL: String? { TestPostgres.baseURL }

    var testDescription: String { rawValue }

    /// A fresh, empty database: a private in-memory SQLite, or a new PostgreSQL schema in the test process's database
    /// (``LiveServer/run(_:_:)`` creates it).
    func freshLocation() -> DatabaseLocation {
        switch self {
        case .sqlite: .sqliteMemory
        case .postgres:
            .postgres(
                url: TestPostgres.url ?? "",
                schema: "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
                maxConnections: 4, idleTimeout: TestPostgres.idleTimeout)
        }
    }
}

/// The server's clock: the wall clock, because the SDK signs its device tokens with it, plus however far a test
/// moved it on.
// @unchecked Sendable: the only mutable state, `offset`, is read and written only while holding `lock`.
final class ServerClock: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0

    func now() -> Date {
        lock.withLock { Date().addingTimeInterval(offset) }
    }

    func advance(by seconds: TimeInterval) {
        lock.withLock { offset += seconds }
    }
}

/// A Verity node serving real HTTP on an ephemeral port of 127.0.0.1, with one project, for the length of a test.
struct LiveServer: Sendable {
    /// Where an app (VerityKit) and a backend reach the server.
    let baseURL: URL
    /// The project's backend, calling with its API key.
    let backend: Backend
    /// The project's public id, which apps send as `X-Verity-Project`.
    let projectId: String
    let clock: ServerClock
    let verity: Verity

    /// The last code the outbox delivered to `destination` (the console sender's text), waiting up to 10 s for
    /// `count` messages.
    func code(to destination: String, count: Int = 1) async throws -> String {
        for _ in 0..<200 {
            let sent = try await verity.outbox.messages(destination: destination).compactMap(\.rendered)
            sent.forEach { LeakWatch.secrets(inMessage: $0.body) }
            if sent.count >= count, let text = sent.first?.body,
                let range = text.range(of: #"\d{4,10}"#, options: .regularExpression)
            {
                return String(text[range])
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CodeNotSent(destination: destination)
    }

    /// The text of the newest message to `destination`, waiting up to 10 s for one.
    func latestMessage(to destination: String) async throws -> String {
        for _ in 0..<200 {
            if let text = try await verity.outbox.messages(destination: destination).first?.rendered?.body {
                LeakWatch.secrets(inMessage: text)
                return text
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CodeNotSent(destination: destination)
    }

    /// How many messages the outbox holds for `destination`.
    func messageCount(to destination: String) async throws -> Int {
        try await verity.outbox.messages(destination: destination).count
    }

    struct CodeNotSent: Error {
        let destination: String
    }

    /// Opens a fresh database, creates the project "Acme", serves the API around `body` and shuts down afterwards
    /// (the application closes the database).
    static func run<T: Sendable>(_ engine: TestEngine, _ body: @Sendable (LiveServer) async throws -> T)
        async throws -> T
    {
        var configuration = ServerConfiguration()
        configuration.logLevel = .trace
        let clock = ServerClock()
        var dependencies = AppDependencies()
        let logs = LogCapture()
        dependencies.logger = Logger(label: "verity-e2e") { _ in logs }
        dependencies.clock = clock
        dependencies.database = engine.freshLocation()
        dependencies.masterKey = try MasterKey(bytes: Array(repeating: 7, count: 32))
        let open = { [dependencies] in try await Verity.open(configuration, dependencies: dependencies) }
        let verity = engine == .postgres ? try await TestPostgres.opening(open) : try await open()
        let app = try await closingOnFailure(verity) { try buildApplication(configuration, verity: verity) }
        return try await ServerGate.run {
            try await app.test(.live) { client in
                let (project, key) = try await verity.admin.createProject(name: "Acme")
                LeakWatch.secret(key.secret)
                let port = try #require(client.port)
                let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
                // The process's one session: a session made and invalidated per test races its own teardown on
                // Linux (see URLSessionTransport).
                let backend = Backend(baseURL: baseURL, apiKey: key.secret, session: .shared)
                return try await body(
                    LiveServer(baseURL: baseURL, backend: backend, projectId: project.id, clock: clock, verity: verity))
            }
        }
    }

    /// The result of `build`, closing `verity`'s database when it fails; once built, the application closes it.
    private static func closingOnFailure<App>(_ verity: Verity, _ build: () throws -> App) async throws -> App {
        do {
            return try build()
        } catch {
            try? await verity.database.close()
            throw error
        }
    }
}
