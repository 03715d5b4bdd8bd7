import Foundation

/// The carrier check's front-channel step: HTTP/1.1 GETs over the cellular interface, following the operator's
/// redirects until the server's callback answers.
///
/// Only HTTPS is followed, at most ``maxRedirects`` redirects, and the whole step ends after the options' timeout.
struct CarrierFrontChannel: Sendable {
    /// The most redirects followed; an operator's chain has a handful.
    static let maxRedirects = 10
    /// The most bytes of an answer read before its header block must have ended.
    static let maxHeaderBytes = 64 * 1024

    let options: CarrierCheckOptions
    /// The Verity server's base URL: the chain must end on it (the callback).
    let serverURL: URL

    /// Opens `url` and follows its redirects until the server's callback answers with success.
    ///
    /// - Throws: ``CarrierCheckError``.
    func open(_ url: URL) async throws {
        let (options, serverURL) = (options, serverURL)
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await Self.follow(url, connection: options.connection, serverURL: serverURL)
                return true
            }
            group.addTask {
                try await options.sleep(options.timeout)
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if !finished { throw CarrierCheckError.timedOut }
    }

    private static func follow(_ start: URL, connection: any CellularConnection, serverURL: URL) async throws {
        var url = start
        for _ in 0...maxRedirects {
            let answer = try await get(url, connection: connection)
            guard (300...399).contains(answer.status) else {
                guard (200...299).contains(answer.status), isOnServer(url, serverURL) else {
                    throw CarrierCheckError.failed(
                        "the front channel ended with HTTP \(answer.status) off the callback")
                }
                return
            }
            guard let location = answer.location, let next = URL(string: location, relativeTo: url)?.absoluteURL
            else { throw CarrierCheckError.failed("a redirect without a location") }
            url = next
        }
        throw CarrierCheckError.failed("too many redirects")
    }

    /// Whether `url` is on the Verity server (same scheme, host and port, below its path).
    static func isOnServer(_ url: URL, _ serverURL: URL) -> Bool {
        url.scheme == serverURL.scheme && url.host == serverURL.host && url.port == serverURL.port
            && url.path.hasPrefix(serverURL.path)
    }

    /// One GET: the answer's status and `Location`.
    static func get(_ url: URL, connection: any CellularConnection) async throws -> (status: Int, location: String?) {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw CarrierCheckError.failed("the front channel left HTTPS")
        }
        let bytes = try await connection.exchange(request(for: url), host: host, port: url.port ?? 443)
        return try parse(bytes)
    }

    /// The HTTP/1.1 request for `url`.
    static func request(for url: URL) -> Data {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let path = components?.percentEncodedPath ?? "/"
        let query = components?.percentEncodedQuery.map { "?\($0)" } ?? ""
        let host = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        let lines = [
            "GET \(path.isEmpty ? "/" : path)\(query) HTTP/1.1", "Host: \(host)", "Accept: */*",
            "User-Agent: VerityKit/\(VerityConfiguration.sdkVersion)", "Connection: close",
        ]
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Reads the status line and the `Location` header of an answer.
    static func parse(_ bytes: Data) throws -> (status: Int, location: String?) {
        let separator = Data("\r\n\r\n".utf8)
        let head = bytes.range(of: separator).map { bytes[..<$0.lowerBound] } ?? bytes
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
            (100...599).contains(status)
        else { throw CarrierCheckError.failed("not an HTTP/1.1 answer") }
        let location = lines.dropFirst().lazy.compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "location"
            else { return nil }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }.first
        return (status, location)
    }
}
