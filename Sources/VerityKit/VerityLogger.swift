import Foundation

/// Where VerityKit's diagnostic messages go, and how many of them.
///
/// Messages name operations, HTTP methods and paths, statuses, error codes and factor or challenge identifiers. They
/// never contain enrollment tokens, device tokens, keys, nonces, signatures or push tokens.
public struct VerityLogger: Sendable {
    /// How important a message is; a logger passes on messages at or above its ``minimumLevel``.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Every request and response.
        case debug
        /// Noteworthy events: a factor enrolled, a clock correction.
        case info
        /// Something failed but the app can carry on.
        case warning
        /// Something failed.
        case error
        /// As a minimum level: log nothing. Messages are never logged at this level.
        case off

        /// Orders levels from ``debug`` to ``off``.
        public static func < (lhs: Level, rhs: Level) -> Bool {
            lhs.rawValue < rhs.rawValue
        }

        /// The level's name: `debug`, `info`, `warning`, `error` or `off`.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            case .off: "off"
            }
        }
    }

    /// A logger that drops everything.
    public static let disabled = VerityLogger(minimumLevel: .off) { _, _ in }

    /// Messages below this level are dropped without being built.
    public var minimumLevel: Level
    private let handler: @Sendable (Level, String) -> Void

    /// Creates a logger.
    ///
    /// - Parameters:
    ///   - minimumLevel: The least important level passed to `handler`.
    ///   - handler: Receives each message with its level; called from any task.
    public init(minimumLevel: Level, handler: @escaping @Sendable (_ level: Level, _ message: String) -> Void) {
        self.minimumLevel = minimumLevel
        self.handler = handler
    }

    /// A logger that writes `VerityKit [level] message` lines to standard error.
    ///
    /// - Parameter minimumLevel: The least important level written.
    /// - Returns: The logger.
    public static func standardError(minimumLevel: Level = .info) -> VerityLogger {
        VerityLogger(minimumLevel: minimumLevel) { level, message in
            FileHandle.standardError.write(Data("VerityKit [\(level)] \(message)\n".utf8))
        }
    }

    /// Passes `message` to the handler if `level` is at or above ``minimumLevel``.
    ///
    /// - Parameters:
    ///   - level: The message's level; ``Level/off`` is never logged.
    ///   - message: The message, built only when it will be logged.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level != .off, level >= minimumLevel else { return }
        handler(level, message())
    }
}
