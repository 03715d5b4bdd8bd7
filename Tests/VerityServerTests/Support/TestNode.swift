import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// The engines a store or API test runs on: SQLite in memory and in a file (with its reader connections) always,
/// PostgreSQL when `VERITY_TEST_POSTGRES_URL` is set (`.ci/run` sets it, so CI runs all three).
enum TestEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case sqliteFile
    case postgres

    static var available: [TestEngine] {
        postgresURL == nil ? [.sqlite, .sqliteFile] : [.sqlite, .sqliteFile, .postgres]
    }

    static var postgresURL: String? { TestPostgres.baseURL }

    var testDescription: String { rawValue }

    /// A fresh, empty database: a private in-memory SQLite, a new SQLite file, or a new PostgreSQL schema in the test
    /// process's database (``TestNode/make(_:location:settings:clock:sender:configure:dependencies:)`` creates it).
    func freshLocation() -> DatabaseLocation {
        switch self {
        case .sqlite: .sqliteMemory
        case .sqliteFile, .postgres: persistentLocation()
        }
    }

    /// A database that survives closing and reopening: a temporary SQLite file, or a new PostgreSQL schema.
    func persistentLocation() -> DatabaseLocation {
        switch self {
        case .sqlite, .sqliteFile:
            .sqliteFile(path: ScratchSpace.directory("verity-test").appendingPathComponent("verity.sqlite").path)
        case .postgres:
            .postgres(
                url: TestPostgres.url ?? "", schema: Self.freshSchemaName(), maxConnections: 4,
                idleTimeout: TestPostgres.idleTimeout)
        }
    }

    private static func freshSchemaName() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }
}

/// A clock the test moves by hand.
final class TestClock: TimeSource {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = NIOLockedValueBox(start)
    }

    func now() -> Date { current.withLockedValue { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLockedValue { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// Captures what would have gone to a carrier or a mail server, so tests read codes the way a person would.
final class RecordingSender: MessageSender, PushSender {
    private let sent = NIOLockedValueBox<[OutgoingMessage]>([])
    private let pushed = NIOLockedValueBox<[PushNotification]>([])
    private let failures = NIOLockedValueBox<[DeliveryError]>([])

    /// The recording senders, with webhook events posted for real; the tests' receivers listen on loopback, so
    /// private addresses are allowed (``SSRFTests`` checks the production policy).
    var senders: Senders {
        Senders(
            sms: self, smsName: "recording", email: self, emailName: "recording", push: self, pushName: "recording",
            events: HTTPEventSender(
                addresses: OutboundAddressPolicy(allowPrivate: true), logger: Logger(label: "verity-test")),
            voice: self, voiceName: "recording", whatsapp: self, whatsappName: "recording")
    }

    private let pushFailures = NIOLockedValueBox<[any Error]>([])

    func send(_ notification: PushNotification) async throws {
        if let failure = pushFailures.withLockedValue({ $0.isEmpty ? nil : $0.removeFirst() }) {
            throw failure
        }
        pushed.withLockedValue { $0.append(notification) }
    }

    /// The next pushes fail with these errors, in order.
    func failNextPushes(_ errors: any Error...) {
        pushFailures.withLockedValue { $0.append(contentsOf: errors) }
    }

    var pushes: [PushNotification] { pushed.withLockedValue { $0 } }

    /// The next sends fail with these errors, in order.
    func failNext(_ errors: DeliveryError...) {
        failures.withLockedValue { $0.append(contentsOf: errors) }
    }

    /// Destinations whose sends wait until released, and how many such sends are waiting now.
    private let holds = NIOLockedValueBox<[String: Int]>([:])

    /// Sends to `destination` wait until ``release(_:)``, as with a provider that does not answer.
    func hold(_ destination: String) {
        holds.withLockedValue { $0[destination] = 0 }
    }

    func release(_ destination: String) {
        holds.withLockedValue { $0[destination] = nil }
    }

    /// Waits until a send to the held `destination` is waiting.
    func waitUntilHeld(_ destination: String, timeout: Duration = .seconds(10)) async throws {
        let deadline = ContinuousClock.now + timeout
        while holds.withLockedValue({ $0[destination] ?? 0 }) == 0 {
            guard ContinuousClock.now < deadline else {
                Issue.record("No send to \(destination) was held")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func send(_ message: OutgoingMessage) async throws {
        let isHeld = holds.withLockedValue { held in
            guard let waiting = held[message.to] else { return false }
            held[message.to] = waiting + 1
            return true
        }
        if isHeld {
            while holds.withLockedValue({ $0[message.to] != nil }) { try await Task.sleep(for: .milliseconds(10)) }
        }
        if let failure = failures.withLockedValue({ $0.isEmpty ? nil : $0.removeFirst() }) {
            throw failure
        }
        LeakWatch.secrets(inMessage: message.body)
        if let code = message.code { LeakWatch.secret(code) }
        sent.withLockedValue { $0.append(message) }
    }

    private let providerMessageIds = NIOLockedValueBox<[String]>([])

    /// The next messages sent are accepted under these provider ids (`wamid.…`, `SM…`), in order.
    func answerNext(providerMessageIds ids: String...) {
        providerMessageIds.withLockedValue { $0.append(contentsOf: ids) }
    }

    func submit(_ message: OutgoingMessage) async throws -> String? {
        try await send(message)
        return providerMessageIds.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
    }

    func messages(to destination: String? = nil) -> [OutgoingMessage] {
        sent.withLockedValue { all in all.filter { destination == nil || $0.to == destination } }
    }

    /// Waits until `count` messages went to `destination` (the worker delivers asynchronously).
    @discardableResult
    func waitForMessages(to destination: String, count: Int = 1, timeout: Duration = .seconds(10)) async throws
        -> [OutgoingMessage]
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = messages(to: destination)
            if found.count >= count { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("Expected \(count) message(s) to \(destination), got \(messages(to: destination).count)")
        throw CancellationError()
    }

    /// The code in the newest message to `destination`.
    func code(to destination: String, count: Int = 1) async throws -> String {
        let message = try #require(try await waitForMessages(to: destination, count: count).last)
        return try #require(Self.code(in: message))
    }

    /// The code as a person reads it, or hears it in a call: the digits of the call's first line, said one by one.
    static func code(in message: OutgoingMessage) -> String? {
        guard message.channel == .voice else { return code(in: message.body) }
        let heard = message.body.split(separator: "\n").first.map { $0.filter(\.isNumber) } ?? ""
        return (4...10).contains(heard.count) ? String(heard) : nil
    }

    static func code(in text: String) -> String? {
        text.firstMatch(of: /\d{4,10}/).map { String($0.output) }
    }
}

/// One Verity node for a test: a fresh database, a test clock, a recording sender, captured logs and a project.
struct TestNode {
    let verity: Verity
    let clock: TestClock
    let sender: RecordingSender
    let logs: LogCapture
    let project: Project
    let apiKey: String
    let configuration: ServerConfiguration
    let location: DatabaseLocation

    static func make(
        _ engine: TestEngine, location: DatabaseLocation? = nil, settings: ProjectSettings = .init(),
        clock: TestClock = TestClock(), sender: RecordingSender = RecordingSender(),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        dependencies extra: (inout AppDependencies) -> Void = { _ in }
    ) async throws -> TestNode {
        let location = location ?? engine.freshLocation()
        var configuration = ServerConfiguration()
        configuration.logLevel = .trace
        configuration.rateLimits.perDestination = RateLimitPolicy(capacity: 1000, period: 1)
        configuration.rateLimits.perProject = RateLimitPolicy(capacity: 1000, period: 1)
        configuration.rateLimits.perNumberBlock = RateLimitPolicy(capacity: 1000, period: 1)
        configuration.outbox.pollInterval = .milliseconds(20)
        // The tests' webhook receivers listen on loopback; ``SSRFTests`` turns this off to check the real policy.
        configuration.webhookAddresses.allowPrivate = true
        configure(&configuration)
        let logs = LogCapture()
        var appDependencies = dependencies(location, clock: clock, logs: logs)
        extra(&appDependencies)
        let verity = try await open(location) { try await Verity.open(configuration, dependencies: appDependencies) }
        let (project, key) = try await verity.admin.createProject(name: "Acme", settings: settings)
        LeakWatch.secret(key.secret)
        return TestNode(
            verity: verity, clock: clock, sender: sender, logs: logs, project: project, apiKey: key.secret,
            configuration: configuration, location: location)
    }

    /// Runs `open`, which opens `location`; on PostgreSQL, a few at a time (``TestPostgres/opening(_:)``).
    private static func open(_ location: DatabaseLocation, _ open: () async throws -> Verity) async throws -> Verity {
        guard case .postgres = location else { return try await open() }
        return try await TestPostgres.opening(open)
    }

    static let masterKey: MasterKey = {
        do { return try MasterKey(bytes: Array(repeating: 7, count: 32)) } catch { fatalError("\(error)") }
    }()

    static func dependencies(_ location: DatabaseLocation, clock: TestClock, logs: LogCapture) -> AppDependencies {
        var dependencies = AppDependencies()
        dependencies.clock = clock
        dependencies.database = location
        dependencies.masterKey = masterKey
        dependencies.logger = Logger(label: "verity-test") { _ in logs }
        return dependencies
    }

    /// Opens the same database again, as a restarted server would.
    func reopened(sender: RecordingSender = RecordingSender()) async throws -> TestNode {
        let dependencies = Self.dependencies(location, clock: clock, logs: logs)
        let verity = try await Self.open(location) { try await Verity.open(configuration, dependencies: dependencies) }
        return TestNode(
            verity: verity, clock: clock, sender: sender, logs: logs, project: project, apiKey: apiKey,
            configuration: configuration, location: location)
    }

    /// Runs the HTTP application (with its outbox worker) around `body`; the database is closed afterwards.
    func run<T: Sendable>(
        _ setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let app = try buildApplication(configuration, verity: verity, senders: sender.senders)
        return try await ServerGate.run { try await app.test(setup, body) }
    }

    /// Creates another project with its own key.
    func otherProject(name: String = "Globex") async throws -> (project: Project, apiKey: String) {
        let (project, key) = try await verity.admin.createProject(name: name)
        LeakWatch.secret(key.secret)
        return (project, key.secret)
    }
}

// MARK: - Requests

extension ProjectSettings {
    /// A new project's settings with calls turned on, as an operator does with `--disabled-channels none`: a new
    /// project has voice off.
    static let voiceOn = ProjectSettings(disabledChannels: [])
}

extension TestClientProtocol {
    func send(
        _ method: HTTPRequest.Method, _ uri: String, key: String?, json: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil, headers[.contentType] == nil { headers[.contentType] = "application/json" }
        let response = try await execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
        LeakWatch.secrets(inJSON: String(buffer: response.body))
        return response
    }

    func startVerification(_ to: String, channel: String = "sms", key: String, locale: String? = nil)
        async throws -> TestResponse
    {
        let locale = locale.map { #","locale":"\#($0)""# } ?? ""
        return try await send(
            .post, "/v1/verifications", key: key, json: #"{"to":"\#(to)","channel":"\#(channel)"\#(locale)}"#)
    }

    func check(to: String, code: String, key: String) async throws -> TestResponse {
        try await send(.post, "/v1/verifications/check", key: key, json: #"{"to":"\#(to)","code":"\#(code)"}"#)
    }

    func check(id: String, code: String, key: String) async throws -> TestResponse {
        try await send(.post, "/v1/verifications/check", key: key, json: #"{"id":"\#(id)","code":"\#(code)"}"#)
    }
}

extension TestResponse {
    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: body)
    }

    /// The problem document of an error response (and checks it is one).
    func problem() throws -> Problem {
        #expect(headers[.contentType] == "application/problem+json")
        return try decode(Problem.self)
    }
}

/// A wrong code for a verification whose right code is `code`.
func wrongCode(for code: String) -> String {
    String(code.map { $0 == "9" ? "0" : Character(String(($0.wholeNumberValue ?? 0) + 1)) })
}
