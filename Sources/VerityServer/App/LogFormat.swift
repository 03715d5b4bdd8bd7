import Foundation
import Logging
import NIOConcurrencyHelpers
import VerityCore

/// How `verity` writes its log to standard error (`VERITY_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's one line of text per record: `2026-11-26T06:53:20+0000 info verity : … message`.
    case text
    /// One JSON object per line, for log collectors (see ``JSONLogHandler``).
    case json

    /// The format `VERITY_LOG_FORMAT` names (`text` when unset).
    ///
    /// - Throws: ``ConfigurationError`` for any other value.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> LogFormat
    {
        guard let value = environment["VERITY_LOG_FORMAT"] else { return .text }
        guard let format = LogFormat(rawValue: value.lowercased()) else {
            throw ConfigurationError("VERITY_LOG_FORMAT must be text or json.")
        }
        return format
    }

    /// Makes the process's log handlers write in this format to standard error. Call it once, first.
    public func bootstrap() {
        switch self {
        case .text: LoggingSystem.bootstrap(StreamLogHandler.standardError)
        case .json: LoggingSystem.bootstrap { label in JSONLogHandler.standardError(label: label) }
        }
    }
}
