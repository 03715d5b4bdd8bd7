import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import SQLKit
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Operations: health, metrics, restarts, logs")
struct OperationsTests {
    let phone = "+14155550100"

    @Test("/health answers without touching the database")
    func health() async throws {
        let node = try await TestNode.make(.sqlite)
        let database = node.verity.database
        try await node.run { client in
            try await database.close()
            let response = try await client.send(.get, "/health", key: nil)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
        }
    }

    @Test(
        "/ready answers 200 while the database answers, and 503 service_unavailable once it cannot",
        arguments: TestEngine.available)
    func ready(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let database = node.verity.database
        try await node.run { client in
            let ready = try await client.send(.get, "/ready", key: nil)
            #expect(ready.status == .ok)
            #expect(String(buffer: ready.body) == #"{"status":"ready"}"#)
            try await database.close()
            let lost = try await client.send(.get, "/ready", key: nil)
            #expect(lost.status == .serviceUnavailable)
            #expect(try lost.problem().code == "service_unavailable")
            // /health stays the liveness check.
            #expect(try await client.send(.get, "/health", key: nil).status == .ok)
        }
    }

    @Test("Every answer carries its own X-Request-Id, and a 500's log line names the same id")
    func requestID() async throws {
        let node = try await TestNode.make(.sqlite)
        let database = node.verity.database
        try await node.run { client in
            let header = HTTPField.Name("X-Request-Id")!
            let health = try #require(try await client.send(.get, "/health", key: nil).headers[header])
            let notFound = try await client.send(.get, "/v1/verifications/ver_unknown", key: node.apiKey)
            #expect(notFound.status == .notFound)
            let refused = try #require(notFound.headers[header])
            // A random first half without its leading zeros, then a counter of 16 digits.
            #expect((17...32).contains(health.count) && health.allSatisfy(\.isHexDigit))
            #expect(refused != health)

            try await database.close()
            let failed = try await client.send(.get, "/v1/verifications/ver_unknown", key: node.apiKey)
            #expect(failed.status == .internalServerError)
            let id = try #require(failed.headers[header])
            #expect(node.logs.lines.contains { $0.contains("Unhandled error") && $0.contains(id) })
        }
    }

    @Test("/ready's wait ends at its limit, whatever the database does")
    func readyLimit() async throws {
        let late = try await ServiceController.result(within: .milliseconds(50)) {
            try await Task.sleep(for: .seconds(30))
            return true
        }
        #expect(late == nil)
        let prompt = try await ServiceController.result(within: .seconds(30)) { 42 }
        #expect(prompt == 42)
        await #expect(throws: CancellationError.self) {
            _ = try await ServiceController.result(within: .seconds(30)) { () async throws -> Int in
                throw CancellationError()
            }
        }
    }

    @Test("/metrics counts requests per route and verification outcomes")
    func metrics() async throws {
        let node = try await TestNode.make(.sqlite)
        try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            let code = try await node.sender.code(to: phone)
            _ = try await client.check(to: phone, code: code, key: node.apiKey)
            _ = try await client.send(.get, "/v1/verifications/ver_unknown", key: node.apiKey)
            let response = try await client.send(.get, "/metrics", key: nil)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(buffer: response.body)
            #expect(text.contains(#"verity_verifications_started_total{channel="sms"} 1"#))
            #expect(text.contains(#"verity_verifications_approved_total{channel="sms"} 1"#))
            #expect(text.contains(#"verity_verifications_failed_total{channel="email"} 0"#))
            #expect(
                text.contains(#"verity_http_requests_total{method="POST",route="/v1/verifications",status="201"} 1"#))
            #expect(text.contains(#"route="/v1/verifications/{id}",status="404"} 1"#))
            #expect(text.contains("verity_http_request_duration_seconds_bucket"))
            #expect(text.contains("verity_outbox_pending_messages"))
            #expect(text.contains(#"verity_outbox_deliveries_total{channel="sms",outcome="sent"} 1"#))
            #expect(text.contains(#"verity_build_info{version="\#(VerityRelease.version)"} 1"#))
        }
    }

    @Test("A pending verification survives a restart and is still checkable", arguments: TestEngine.available)
    func restart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, location: engine.persistentLocation())
        let (id, code) = try await node.run { client in
            let id = try await client.startVerification(phone, key: node.apiKey).decode(VerificationResponse.self).id
            return (id, try await node.sender.code(to: phone))
        }
        let restarted = try await node.reopened()
        try await restarted.run { client in
            let wrong = try await client.check(id: id, code: wrongCode(for: code), key: restarted.apiKey)
            #expect(try wrong.decode(CheckVerificationResponse.self).valid == false)
            let right = try await client.check(to: phone, code: code, key: restarted.apiKey)
            #expect(try right.decode(CheckVerificationResponse.self).valid)
            let fetched = try await client.send(.get, "/v1/verifications/\(id)", key: restarted.apiKey)
            #expect(try fetched.decode(VerificationResponse.self).checkAttempts == 1)
        }
    }

    @Test("Logs never contain codes, keys or full destinations, at any level")
    func logsAreRedacted() async throws {
        let node = try await TestNode.make(.sqlite)
        let email = "jane.doe@example.com"
        let code = try await node.run { client in
            _ = try await client.startVerification(phone, key: node.apiKey)
            _ = try await client.startVerification(email, channel: "email", key: node.apiKey)
            let code = try await node.sender.code(to: phone)
            let emailCode = try await node.sender.code(to: email)
            _ = try await client.check(to: phone, code: wrongCode(for: code), key: node.apiKey)
            _ = try await client.check(to: phone, code: code, key: node.apiKey)
            _ = try await client.check(to: email, code: emailCode, key: node.apiKey)
            _ = try await client.startVerification(phone, key: "vk_wrongwrongwrong")
            return code
        }
        let logs = node.logs.text
        #expect(logs.contains("Verification started"))
        #expect(logs.contains("+1********00"))
        #expect(!logs.contains(code))
        #expect(!logs.contains(node.apiKey))
        #expect(!logs.contains("vk_wrongwrongwrong"))
        #expect(!logs.contains(phone))
        #expect(!logs.contains("4155550100"))
        #expect(!logs.contains(email))
        // ServiceLifecycle logs each service at debug level: by name, not with its keys and clients.
        #expect(logs.contains("sl-service=OutboxWorker"))
        #expect(!logs.contains("SymmetricKey"))
    }

    @Test("The master key file is created once, with mode 0600")
    func masterKeyFile() throws {
        let directory = ScratchSpace.root.appendingPathComponent("verity-key-\(UUID())").path
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        let first = try configuration.loadMasterKey()
        let second = try configuration.loadMasterKey()
        let codes = (CodeGenerator(masterKey: first), CodeGenerator(masterKey: second))
        #expect(
            codes.0.code(verificationId: "ver_a", salt: "s", length: 6)
                == codes.1.code(verificationId: "ver_a", salt: "s", length: 6))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/master.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("A master key file other users may read is refused, with the fix in the message")
    func openMasterKeyFile() throws {
        let directory = ScratchSpace.root.appendingPathComponent("verity-key-\(UUID())").path
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        _ = try configuration.loadMasterKey()
        let path = directory + "/master.key"
        for mode in [0o644, 0o640, 0o604, 0o660] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let error = #expect(throws: ConfigurationError.self) { try configuration.loadMasterKey() }
            #expect(error?.description.contains(path) == true)
            #expect(error?.description.contains("chmod 600") == true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: path)
        _ = try configuration.loadMasterKey()
    }

    @Test("A data directory that cannot be made is refused with the system's reason")
    func unusableDataDirectory() throws {
        let file = ScratchSpace.root.appendingPathComponent("verity-file-\(UUID())").path
        try Data().write(to: URL(fileURLWithPath: file))
        var configuration = ServerConfiguration()
        for (directory, reason) in [(file, "File exists"), (file + "/data", "Not a directory")] {
            configuration.dataDirectory = directory
            let error = #expect(throws: ConfigurationError.self) { try configuration.loadMasterKey() }
            #expect(error?.description == "Cannot create the data directory \(directory): \(reason).")
        }
    }

    @Test("Start-up names each channel's sender, and warns when a server others reach keeps codes in its outbox")
    func deliveryNotice() {
        let console = ConsoleSender(logger: Logger(label: "verity-test") { _ in SwiftLogNoOpLogHandler() })
        let senders = Senders(
            sms: console, smsName: "twilio", email: console, emailName: "console", voice: console,
            voiceName: "webhook", whatsapp: console, whatsappName: "console")
        for (host, warns) in [("0.0.0.0", true), ("10.1.2.3", true), ("127.0.0.1", false), ("localhost", false)] {
            let logs = LogCapture()
            senders.logDelivery(host: host, logger: Logger(label: "verity-test") { _ in logs })
            #expect(logs.lines.first == "notice Delivery email=console sms=twilio voice=webhook whatsapp=console")
            let warning =
                "warning Codes by email, whatsapp are not sent: console delivery keeps them in the outbox. "
                + "Name a sender with VERITY_EMAIL_SENDER, VERITY_WHATSAPP_SENDER. "
            #expect(logs.lines.contains(warning) == warns, "\(host): \(logs.lines)")
        }
    }

    // The limit guards against a hang (a connection the server never closes); the test itself takes a second, but in
    // a full run on two loaded cores the node's start alone has taken most of a minute.
    @Test("A connection with no request in progress is closed after the idle timeout", .timeLimit(.minutes(3)))
    func idleConnections() async throws {
        let node = try await TestNode.make(.sqlite, configure: { $0.idleTimeout = .milliseconds(200) })
        try await node.run(.live) { client in
            let port = try #require(client.port)
            let flow = try await client.send(
                .post, "/v1/possession", key: node.apiKey, json: #"{"phoneNumber":"+14155550100","flow":"desktop"}"#)
            let started = try flow.decode(StartedPossession.self)
            let link = try await client.send(
                .post, "/v1/possession/\(started.correlationId)/link/start", key: started.authToken, json: "{}")
            #expect(link.status == .ok)
            // A client that connects and sends nothing, and one that stops in the middle of its request headers.
            for sent in ["", "GET /health HTTP/1.1\r\nHost: x\r\n"] {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: port).get()
                if !sent.isEmpty { try await channel.writeAndFlush(ByteBuffer(string: sent)).get() }
                try await channel.closeFuture.get()
            }
            // A long poll outlasts it: a request in progress is never cut off.
            var request = HTTPClientRequest(
                url: "http://127.0.0.1:\(port)/v1/possession/\(started.correlationId)?wait=1")
            request.headers.add(name: "Authorization", value: "Bearer \(started.authToken)")
            let poll = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(poll.status == .ok)
        }
    }

    @Test("A server that cannot listen says why and what to change")
    func listeningFailures() async throws {
        let taken = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0).get()
        defer { taken.close(promise: nil) }
        let port = try #require(taken.localAddress?.port)
        let cases = [
            ("127.0.0.1", port, "127.0.0.1:\(port) is already in use: stop what listens there, or choose another port"),
            ("192.0.2.1", 0, "192.0.2.1 is not an address of this machine: choose another with --host"),
            ("no-such-host.invalid", 0, "The host no-such-host.invalid does not resolve"),
        ]
        for (host, port, message) in cases {
            var configuration = ServerConfiguration()
            configuration.host = host
            configuration.port = port
            let verity = try await Verity.open(
                configuration,
                dependencies: TestNode.dependencies(.sqliteMemory, clock: TestClock(), logs: LogCapture()))
            let app = try buildApplication(configuration, verity: verity)
            do {
                try await app.runService()
                Issue.record("\(host):\(port) was listened on")
            } catch {
                let explained = ConfigurationError(listeningFailure: error, host: host, port: port)
                #expect(explained?.description.hasPrefix(message) == true, "\(error)")
            }
        }
        #expect(ConfigurationError(listeningFailure: CancellationError(), host: "127.0.0.1", port: 80) == nil)
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    @Test("Environment variables configure the server")
    func environment() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: [
            "VERITY_HOST": "0.0.0.0", "VERITY_PORT": "9000", "VERITY_DATA_DIR": "/var/lib/verity",
            "VERITY_LOG_LEVEL": "debug", "VERITY_RATE_LIMIT_DESTINATION": "3/m", "VERITY_SMS_SENDER": "twilio",
            "VERITY_TWILIO_ACCOUNT_SID": "AC123", "VERITY_TWILIO_AUTH_TOKEN": "secret",
            "VERITY_TWILIO_FROM": "+15005550006",
            "VERITY_EMAIL_SENDER": "smtp", "VERITY_SMTP_HOST": "mail.example.com",
            "VERITY_SMTP_FROM": "codes@example.com",
            "VERITY_SMTP_SECURITY": "tls", "VERITY_RATE_LIMIT_NUMBER_BLOCK": "50/d",
            "VERITY_FIREBASE_FACE": "false", "VERITY_FIREBASE_EMULATOR_ADMIN": "TRUE",
        ])
        #expect(!configuration.firebaseFace)
        #expect(configuration.firebaseEmulatorAdmin)
        #expect(configuration.idleTimeout == .seconds(75))
        var idle = ServerConfiguration()
        try idle.apply(environment: ["VERITY_IDLE_TIMEOUT": "120"])
        #expect(idle.idleTimeout == .seconds(120))
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.rateLimits.perDestination == RateLimitPolicy(capacity: 3, period: 60))
        #expect(configuration.rateLimits.perNumberBlock == RateLimitPolicy(capacity: 50, period: 86_400))
        #expect(try configuration.databaseLocation == .sqliteFile(path: "/var/lib/verity/verity.sqlite"))
        guard case .twilio(let twilio) = configuration.sms else {
            Issue.record("expected Twilio")
            return
        }
        #expect(twilio.accountSID == "AC123")
        guard case .smtp(let smtp) = configuration.email else {
            Issue.record("expected SMTP")
            return
        }
        #expect(smtp.port == 465)
    }

    @Test(
        "Bad configuration is refused with a message that says what to fix",
        arguments: [
            ["VERITY_PORT": "eighty"], ["VERITY_LOG_LEVEL": "loud"], ["VERITY_SMS_SENDER": "pigeon"],
            ["VERITY_SMS_SENDER": "twilio"], ["VERITY_SMS_SENDER": "webhook", "VERITY_SMS_WEBHOOK_URL": "http://x"],
            ["VERITY_EMAIL_SENDER": "smtp"], ["VERITY_RATE_LIMIT_PROJECT": "fast"],
            ["VERITY_DATABASE_URL": "mysql://x"], ["VERITY_MASTER_KEY": "c2hvcnQ="],
            [
                "VERITY_APNS_KEY_FILE": "/nonexistent/AuthKey.p8", "VERITY_APNS_TEAM_ID": "T",
                "VERITY_APNS_KEY_ID": "K",
                "VERITY_APNS_TOPIC": "com.example.app",
            ],
            ["VERITY_APNS_KEY_FILE": "/dev/null"], ["VERITY_FCM_SERVICE_ACCOUNT_FILE": "/nonexistent/account.json"],
            ["VERITY_FIREBASE_FACE": "maybe"], ["VERITY_FIREBASE_EMULATOR_ADMIN": "1"],
            ["VERITY_WEBHOOK_ALLOW_PRIVATE": "yes"], ["VERITY_DATABASE_POOL_SIZE": "0"],
            ["VERITY_DATABASE_POOL_SIZE": "lots"], ["VERITY_IDLE_TIMEOUT": "0"], ["VERITY_IDLE_TIMEOUT": "forever"],
        ])
    func badEnvironment(_ environment: [String: String]) throws {
        var configuration = ServerConfiguration()
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: environment)
            _ = try configuration.databaseLocation
            _ = try configuration.loadMasterKey()
        }
    }

    @Test(
        "An unreachable PostgreSQL is waited for, then refused with the system's reason", .timeLimit(.minutes(1)))
    func unreachablePostgres() async throws {
        let logs = LogCapture()
        let started = ContinuousClock.now
        let error = await #expect(throws: ConfigurationError.self) {
            _ = try await Database.open(
                .postgres(url: "postgres://verity@127.0.0.1:1/verity?sslmode=disable", startupWait: .seconds(1)),
                logger: Logger(label: "verity-test") { _ in logs })
        }
        #expect(error?.description.hasPrefix("Cannot reach PostgreSQL at 127.0.0.1:1: Connection refused") == true)
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(logs.text.contains("Waiting for PostgreSQL"))
    }

    @Test(
        "PostgreSQL's own refusal (no such database, no such role) ends the start at once, in its words",
        .enabled(if: TestPostgres.baseURL != nil))
    func postgresRefusal() async throws {
        let base = try #require(TestPostgres.baseURL.flatMap(URLComponents.init(string:)))
        var noDatabase = base
        noDatabase.path = "/verity_no_such_database"
        var noRole = base
        noRole.user = "verity_no_such_role"
        for (components, reason) in [
            (noDatabase, #"database "verity_no_such_database" does not exist"#),
            (noRole, #"role "verity_no_such_role" does not exist"#),
        ] {
            let error = await #expect(throws: ConfigurationError.self) {
                _ = try await Database.open(
                    .postgres(url: try #require(components.string), startupWait: .seconds(600)),
                    logger: Logger(label: "verity-test") { _ in SwiftLogNoOpLogHandler() })
            }
            let address = "\(base.host ?? ""):\(base.port ?? 5432)"
            #expect(error?.description == "PostgreSQL at \(address) refused the connection: \(reason).")
        }
    }

    @Test("APNs and FCM credentials come from files named in the environment, and are checked at start-up")
    func pushCredentials() throws {
        let directory = ScratchSpace.root.appendingPathComponent(
            "verity-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("AuthKey.p8")
        try P256.Signing.PrivateKey().pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let notAKey = directory.appendingPathComponent("not-a-key.p8")
        try "hello".write(to: notAKey, atomically: true, encoding: .utf8)
        let apns = [
            "VERITY_APNS_KEY_FILE": keyFile.path, "VERITY_APNS_TEAM_ID": "TEAM123456",
            "VERITY_APNS_KEY_ID": "KEY1234567",
            "VERITY_APNS_TOPIC": "com.example.app", "VERITY_APNS_ENVIRONMENT": "sandbox",
        ]

        var configuration = ServerConfiguration()
        try configuration.apply(environment: apns)
        let configured = try #require(configuration.apns)
        #expect(configured.resolvedBaseURL == "https://api.sandbox.push.apple.com")
        #expect(configured.topic == "com.example.app")
        #expect(!configured.description.contains("PRIVATE KEY"))
        #expect(configuration.fcm == nil)

        for broken in [["VERITY_APNS_KEY_FILE": notAKey.path], ["VERITY_APNS_ENVIRONMENT": "staging"]] {
            var refused = ServerConfiguration()
            #expect(throws: ConfigurationError.self) { try refused.apply(environment: apns.merging(broken) { $1 }) }
        }
        let account = directory.appendingPathComponent("account.json")
        try #"{"project_id":"p"}"#.write(to: account, atomically: true, encoding: .utf8)
        var refused = ServerConfiguration()
        #expect(throws: ConfigurationError.self) {
            try refused.apply(environment: ["VERITY_FCM_SERVICE_ACCOUNT_FILE": account.path])
        }
    }

    @Test("A database URL picks the engine")
    func databaseURLs() throws {
        var configuration = ServerConfiguration()
        configuration.databaseURL = "postgres://u:p@db:5432/verity"
        let boxSized = 2 * ProcessInfo.processInfo.activeProcessorCount + 2
        #expect(
            try configuration.databaseLocation
                == .postgres(url: "postgres://u:p@db:5432/verity", maxConnections: boxSized))
        try configuration.apply(environment: ["VERITY_DATABASE_POOL_SIZE": "7"])
        #expect(
            try configuration.databaseLocation == .postgres(url: "postgres://u:p@db:5432/verity", maxConnections: 7))
        configuration.databaseURL = "sqlite:///tmp/v.sqlite"
        #expect(try configuration.databaseLocation == .sqliteFile(path: "/tmp/v.sqlite"))
    }
}

@Suite("Codes and messages")
struct CodeTests {
    let generator = CodeGenerator(masterKey: TestNode.masterKey)

    @Test("Codes have the requested length, are stable for a salt and differ between salts", arguments: 4...10)
    func lengths(_ length: Int) {
        let code = generator.code(verificationId: "ver_1", salt: "a", length: length)
        #expect(code.count == length)
        #expect(code.allSatisfy { $0.isNumber })
        #expect(generator.code(verificationId: "ver_1", salt: "a", length: length) == code)
        let others = Set((0..<50).map { generator.code(verificationId: "ver_1", salt: "salt\($0)", length: length) })
        #expect(others.count > 45)
        #expect(generator.matches(code, verificationId: "ver_1", salt: "a", length: length))
        #expect(!generator.matches(code + "0", verificationId: "ver_1", salt: "a", length: length))
        #expect(!generator.matches(wrongCode(for: code), verificationId: "ver_1", salt: "a", length: length))
    }

    @Test("Another master key gives other codes")
    func masterKeyMatters() throws {
        let other = CodeGenerator(masterKey: try MasterKey(bytes: Array(repeating: 8, count: 32)))
        let codes = (0..<20).map { ("ver_\($0)", "s") }
        #expect(
            codes.contains {
                generator.code(verificationId: $0.0, salt: $0.1, length: 6)
                    != other.code(verificationId: $0.0, salt: $0.1, length: 6)
            })
    }

    @Test("Digits are spread evenly")
    func distribution() {
        var counts = [Character: Int]()
        for index in 0..<2000 {
            for digit in generator.code(verificationId: "ver_\(index)", salt: "x", length: 6) {
                counts[digit, default: 0] += 1
            }
        }
        #expect(counts.count == 10)
        #expect(counts.values.allSatisfy { (1000...1400).contains($0) })
    }

    @Test(
        "Locales resolve by language; malformed tags are refused",
        arguments: [
            ("en", "en"), ("EN-us", "en"), ("es-419", "es"), ("pt_BR", "pt"), ("ja-JP", "ja"), ("sv-SE", "en"),
            ("zh-Hant-TW", "en"),
        ])
    func languages(_ locale: String, _ language: String) {
        #expect(MessageTemplates.language(for: locale) == language)
    }

    @Test("Malformed locales", arguments: ["", "e", "english!", "en--US", "<b>", String(repeating: "a", count: 40)])
    func badLocales(_ locale: String) {
        #expect(MessageTemplates.language(for: locale) == nil)
    }

    @Test("A project name cannot inject a code placeholder")
    func templateInjection() {
        let text = MessageTemplates.render(channel: .sms, language: "en", projectName: "{code} Corp", code: "123456")
        #expect(text.body == "Your {code} Corp verification code is: 123456")
    }
}
