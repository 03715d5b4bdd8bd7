import Foundation
import Logging
import NIOConcurrencyHelpers

/// Collects, across the whole test run, every log line the servers under test write and every secret the tests
/// handle (API keys, codes, links, session and refresh tokens), when `VERITY_TEST_LEAK_DIR` names a directory.
/// `Tests/logleak/scan.py` reads both afterwards and fails if any secret, token or full phone number reached a log
/// line. Without the variable nothing is written.
///
/// A process-wide sink on purpose: the check is over the whole suite, which no single test can see.
public enum LeakWatch {
    private static let files: NIOLockedValueBox<(logs: FileHandle, secrets: FileHandle)?> = {
        guard let directory = ProcessInfo.processInfo.environment["VERITY_TEST_LEAK_DIR"], !directory.isEmpty else {
            return NIOLockedValueBox(nil)
        }
        let pid = ProcessInfo.processInfo.processIdentifier
        func open(_ name: String) -> FileHandle? {
            let path = "\(directory)/\(name)-\(pid).txt"
            guard FileManager.default.createFile(atPath: path, contents: nil) else { return nil }
            return FileHandle(forWritingAtPath: path)
        }
        guard let logs = open("logs"), let secrets = open("secrets") else { return NIOLockedValueBox(nil) }
        return NIOLockedValueBox((logs, secrets))
    }()

    /// Records one rendered log line.
    public static func log(_ line: String) {
        write(line, to: \.logs)
    }

    /// Records a value that must never appear in a log line.
    public static func secret(_ value: String) {
        guard !value.isEmpty else { return }
        write(value, to: \.secrets)
    }

    /// Records the string values in a JSON response body that are credentials: tokens, keys, secrets and
    /// numeric codes.
    public static func secrets(inJSON body: String) {
        guard files.withLockedValue({ $0 != nil }), body.hasPrefix("{"),
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8))
        else { return }
        collect(object)
    }

    /// Records the secrets in a message the server sent: its codes and instant-link tokens.
    public static func secrets(inMessage body: String) {
        for match in body.matches(of: /\/p\/([^\s"'<>]+)/) { secret(String(match.output.1)) }
        // Codes are the runs of digits outside links (a link's port is not a code).
        let text = body.replacing(/https?:\/\/\S+/, with: " ")
        for match in text.matches(of: /\d{4,10}/) { secret(String(match.output)) }
    }

    private static let secretKeys: Set<String> = [
        "apiKey", "secret", "refreshToken", "sessionJwt", "authToken", "token", "enrollmentToken", "uri",
    ]

    private static func collect(_ value: Any, key: String? = nil) {
        switch value {
        case let object as [String: Any]:
            for (name, member) in object { collect(member, key: name) }
        case let array as [Any]:
            for element in array { collect(element, key: key) }
        case let text as String:
            if let key, secretKeys.contains(key) || (key == "code" && text.allSatisfy(\.isNumber)) {
                secret(text)
            }
        default:
            break
        }
    }

    private static func write(
        _ text: String, to file: KeyPath<(logs: FileHandle, secrets: FileHandle), FileHandle>
    ) {
        let line = text.replacingOccurrences(of: "\n", with: "\\n") + "\n"
        files.withLockedValue { files in
            files?[keyPath: file].write(Data(line.utf8))
        }
    }
}

/// Keeps every log line (message and metadata) the server writes, at every level, and hands each to ``LeakWatch``.
public struct LogCapture: LogHandler {
    private let box: NIOLockedValueBox<[String]>
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init() {
        box = NIOLockedValueBox([])
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = "\(event.level) \(event.message) \(all.map { "\($0)=\($1)" }.sorted().joined(separator: " "))"
        LeakWatch.log(rendered)
        box.withLockedValue { $0.append(rendered) }
    }

    /// Every line logged so far.
    public var lines: [String] { box.withLockedValue { $0 } }

    /// Everything logged so far, one line per event.
    public var text: String { lines.joined(separator: "\n") }
}
