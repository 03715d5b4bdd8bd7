import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import VerityCore

@testable import VerityServer

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// A logger whose handler hands its lines to `lines`.
    private static func logger(_ lines: NIOLockedValueBox<[String]>) -> Logger {
        var handler = JSONLogHandler(label: "verity") { line in lines.withLockedValue { $0.append(line) } }
        handler.metadata = ["node": "a", "shared": "handler"]
        var logger = Logger(label: "verity") { _ in handler }
        logger.logLevel = .info
        return logger
    }

    @Test("one object per line: time, level, label, source and message first; metadata merged, the record's winning")
    func line() throws {
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Self.logger(lines)
        logger.info(
            "sent \"it\"\nnext", metadata: ["shared": "record", "attempt": .stringConvertible(2), "to": ["a", "b"]],
            source: "VerityServer")
        logger.debug("below the level")
        let written = lines.withLockedValue { $0 }
        try #require(written.count == 1)
        let line = written[0]
        #expect(line.hasSuffix("}\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.hasPrefix(#"{"time":""#))
        let keys = ["\"time\"", "\"level\"", "\"label\"", "\"source\"", "\"message\"", "\"metadata\""]
        let positions = try keys.map { try #require(line.range(of: $0)).lowerBound }
        #expect(positions == positions.sorted())
        let record = try JSONDecoder().decode([String: JSONValue].self, from: Data(line.utf8))
        #expect(record["level"] == .string("info"))
        #expect(record["label"] == .string("verity"))
        #expect(record["source"] == .string("VerityServer"))
        #expect(record["message"] == .string("sent \"it\"\nnext"))
        #expect(
            record["metadata"]
                == .object([
                    "node": .string("a"), "shared": .string("record"), "attempt": .string("2"),
                    "to": .array([.string("a"), .string("b")]),
                ]))
        let time = try #require(record["time"]?.stringValue)
        #expect(time.hasSuffix("Z") && time.contains("."))
        #expect((try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(time)) != nil)
    }

    @Test("no metadata key when there is no metadata")
    func bare() throws {
        let lines = NIOLockedValueBox<[String]>([])
        var logger = Logger(label: "verity") { label in
            JSONLogHandler(label: label) { line in lines.withLockedValue { $0.append(line) } }
        }
        logger.logLevel = .info
        logger.notice("listening")
        let line = try #require(lines.withLockedValue { $0 }.first)
        #expect(!line.contains("metadata"))
        #expect(line.contains(#""level":"notice""#))
    }

    @Test("VERITY_LOG_FORMAT picks text (the default) or json, and refuses anything else")
    func format() throws {
        #expect(try LogFormat.fromEnvironment([:]) == .text)
        #expect(try LogFormat.fromEnvironment(["VERITY_LOG_FORMAT": "JSON"]) == .json)
        #expect(try LogFormat.fromEnvironment(["VERITY_LOG_FORMAT": "text"]) == .text)
        #expect(throws: ConfigurationError.self) { try LogFormat.fromEnvironment(["VERITY_LOG_FORMAT": "xml"]) }
    }
}
