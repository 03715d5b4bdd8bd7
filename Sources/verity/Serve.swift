import ArgumentParser
import Foundation
import Hummingbird
import Logging
import VerityServer

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the Verity server.",
        discussion: """
            With no options: 127.0.0.1:8080, an SQLite database and a master key in ./verity-data, and console \
            delivery (read messages with `verity outbox list`). Every option can also come from its VERITY_* \
            environment variable; delivery (VERITY_SMS_SENDER, VERITY_EMAIL_SENDER, VERITY_VOICE_SENDER, \
            VERITY_WHATSAPP_SENDER, …), delivery-status callbacks (VERITY_WHATSAPP_APP_SECRET, \
            VERITY_WHATSAPP_VERIFY_TOKEN; Twilio's with VERITY_PUBLIC_URL and the Twilio auth token), rate \
            limits, trusted proxies (VERITY_TRUSTED_PROXIES), webhook targets (VERITY_WEBHOOK_ALLOW_PRIVATE), the \
            PostgreSQL pool (VERITY_DATABASE_POOL_SIZE), idle connections (VERITY_IDLE_TIMEOUT), the log format \
            (VERITY_LOG_FORMAT=json for one JSON object per line) and the faces \
            (VERITY_TWILIO_VERIFY_PREFIX, VERITY_DESCOPE_PREFIX, VERITY_FIREBASE_FACE, \
            VERITY_FIREBASE_EMULATOR_ADMIN) are configured only \
            through the environment. See the README for the full table.
            """)

    @Option(help: "Address to listen on (env: VERITY_HOST).")
    var host: String?

    @Option(help: "Port to listen on (env: VERITY_PORT).")
    var port: Int?

    @OptionGroup var storage: StorageOptions

    @Option(help: "trace, debug, info, notice, warning or error (env: VERITY_LOG_LEVEL).")
    var logLevel: String?

    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be between 0 and 65535.") }
        if let logLevel, Logger.Level(rawValue: logLevel.lowercased()) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error.")
        }
    }

    func run() async throws {
        var configuration = try storage.configuration()
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let level = logLevel.flatMap({ Logger.Level(rawValue: $0.lowercased()) }) { configuration.logLevel = level }
        let app = try await buildApplication(configuration)
        do {
            try await app.runService()
        } catch {
            throw ConfigurationError(listeningFailure: error, host: configuration.host, port: configuration.port)
                ?? error
        }
    }
}
