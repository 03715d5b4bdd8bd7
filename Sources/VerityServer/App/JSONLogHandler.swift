import Foundation
import Logging
import NIOConcurrencyHelpers
import VerityCore

/// Writes each log record as one line of JSON, in a fixed order of keys:
///
/// ```
/// {"time":"2026-11-26T06:53:20.123Z","level":"info","label":"verity","source":"VerityServer","message":"…","metadata":{…}}
/// ```
///
/// `time` is UTC with milliseconds; `metadata` (the logger's, its provider's and the record's, the record's winning)
/// is left out when empty, and its keys are sorted. What reaches the log is what the text format writes: the same
/// messages and metadata, which never carry a secret, a code or a full phone number.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    /// Takes one finished line, its newline included.
    let write: @Sendable (String) -> Void

    init(label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    /// A handler that writes to standard error, for `LoggingSystem.bootstrap`.
    public static func standardError(label: String) -> JSONLogHandler {
        JSONLogHandler(label: label) { line in
            standardErrorLock.withLock { FileHandle.standardError.write(Data(line.utf8)) }
        }
    }

    /// Keeps two records' lines from interleaving.
    private static let standardErrorLock = NIOLock()

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let recorded = event.metadata { merged.merge(recorded) { _, new in new } }
        var line = "{\"time\":" + Self.quoted(Self.timeFormat.format(Date()))
        line += ",\"level\":" + Self.quoted(event.level.rawValue)
        line += ",\"label\":" + Self.quoted(label)
        line += ",\"source\":" + Self.quoted(event.source)
        line += ",\"message\":" + Self.quoted(event.message.description)
        if !merged.isEmpty {
            line += ",\"metadata\":" + Self.encoded(.object(merged.mapValues(Self.json)))
        }
        write(line + "}\n")
    }

    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let string): .string(string)
        case .stringConvertible(let convertible): .string(convertible.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    private static func quoted(_ string: String) -> String { encoded(.string(string)) }

    private static func encoded(_ value: JSONValue) -> String {
        (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// One encoder for every field of every line (its settings never change after this).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
