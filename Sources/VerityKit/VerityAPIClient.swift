import Foundation
import VerityCore

/// Sends JSON requests to the Verity API and turns answers into values or ``VerityKitError``s.
///
/// It knows nothing about tokens beyond putting one in the `Authorization` header, and never logs headers or bodies.
/// Its own header fields (`Accept`, `Content-Type`, `Authorization`) win over the caller's extra ones.
struct VerityAPIClient: Sendable {
    let baseURL: URL
    let transport: any Transport
    let logger: VerityLogger

    /// Sends a request and returns the raw answer.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: The path below ``baseURL``, without a leading slash, built from validated identifiers only.
    ///   - query: Query items, if any.
    ///   - body: The JSON body, already encoded, or `nil`.
    ///   - headers: Extra header fields, for example the project header of the `/v1/auth/…` endpoints.
    ///   - bearerToken: The credential for the `Authorization` header, or `nil` to send none.
    ///   - timeout: The least time the request needs (a long poll), or `nil` for the transport's default.
    /// - Throws: ``VerityKitError/network(_:)`` when there is no answer.
    func send(
        _ method: TransportRequest.Method, _ path: String, query: [URLQueryItem] = [], body: Data? = nil,
        headers extraHeaders: [String: String] = [:], bearerToken: String?, timeout: TimeInterval? = nil
    ) async throws -> TransportResponse {
        var url = baseURL.appendingPathComponent(path)
        if !query.isEmpty {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw VerityKitError.initialization("The base URL cannot take a query.")
            }
            components.queryItems = query
            guard let withQuery = components.url else {
                throw VerityKitError.initialization("The base URL cannot take a query.")
            }
            url = withQuery
        }
        var headers = extraHeaders
        headers["Accept"] = "application/json"
        if let bearerToken { headers["Authorization"] = "Bearer \(bearerToken)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = TransportRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)

        logger.log(.debug, "\(method.rawValue) /\(path)")
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch let error as VerityKitError {
            logger.log(.warning, "\(method.rawValue) /\(path) failed: \(error.code)")
            throw error
        } catch {
            logger.log(.warning, "\(method.rawValue) /\(path) failed: network")
            throw VerityKitError.network(error.localizedDescription)
        }
        logger.log(.debug, "\(method.rawValue) /\(path) -> \(response.status)")
        return response
    }

    /// Decodes a successful answer, or throws the error it carries.
    ///
    /// - Parameters:
    ///   - type: The expected body type.
    ///   - response: The answer.
    ///   - status: The success status.
    /// - Throws: ``VerityKitError/server(_:)`` for an error status, ``VerityKitError/mapping(_:)`` for an unexpected
    ///   status or body.
    func decode<Value: Decodable>(_ type: Value.Type, from response: TransportResponse, status: Int) throws -> Value {
        try check(response, status: status)
        do {
            return try Self.makeDecoder().decode(type, from: response.body)
        } catch {
            throw VerityKitError.mapping("The server's answer is not a valid \(type).")
        }
    }

    /// Throws the error an answer carries unless it has the expected status.
    ///
    /// - Throws: ``VerityKitError/server(_:)`` for an error status, ``VerityKitError/mapping(_:)`` for another one.
    func check(_ response: TransportResponse, status: Int) throws {
        guard response.status != status else { return }
        guard (400...599).contains(response.status) else {
            throw VerityKitError.mapping("The server answered with the unexpected HTTP status \(response.status).")
        }
        let problem = Self.problem(from: response)
        logger.log(.warning, "the server refused the request: \(problem.status) \(problem.code)")
        throw VerityKitError.server(problem)
    }

    /// The problem document of an error answer, or one made up from its status.
    static func problem(from response: TransportResponse) -> Problem {
        if let problem = try? JSONDecoder().decode(Problem.self, from: response.body) {
            return problem
        }
        var problem = Problem(
            code: ErrorCode(genericFor: response.status),
            detail: "The server answered HTTP \(response.status) without a problem document.")
        problem.status = response.status
        return problem
    }

    /// Encodes a request body: RFC 3339 dates, sorted keys.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw VerityKitError.mapping("A request body could not be encoded.")
        }
    }

    /// A decoder for RFC 3339 dates with or without fractional seconds.
    static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) {
                return date
            }
            if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
                return date
            }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not an RFC 3339 date.")
        }
        return decoder
    }

    /// Reads an HTTP `Date` header (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
