import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``Transport``, built on Foundation's `URLSession`.
public struct URLSessionTransport: Transport {
    private let session: URLSession
    private let timeout: TimeInterval

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - session: The session to send with. The default is one session for the whole process that keeps no
    ///     cookies, credentials or cached responses, so nothing one request leaves behind reaches another.
    ///   - timeout: Seconds to wait for each request before giving up; a request that needs longer (a long poll,
    ///     ``TransportRequest/timeout``) gets its own.
    public init(session: URLSession? = nil, timeout: TimeInterval = 30) {
        self.session = session ?? Self.sharedSession
        self.timeout = timeout
    }

    /// The default session, made once and never torn down. A session per transport would be released with it, and
    /// on Linux a `URLSession`'s teardown races the dispatch sources of its sockets (swift-corelibs-foundation
    /// #4791 and later reports): a test run that made hundreds of transports crashed in it.
    private static let sharedSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCredentialStorage = nil
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    /// Sends `request` with `URLSession` and returns the HTTP answer, whatever its status.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response.
    /// - Throws: ``VerityKitError/network(_:)`` when there is no HTTP response.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData)
        // Set through the property: swift-corelibs-foundation (Linux) ignores the initialiser's timeout and would
        // apply the session's 60 s instead.
        urlRequest.timeoutInterval = max(timeout, request.timeout ?? 0)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch {
            throw VerityKitError.network(error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw VerityKitError.network("The server's answer is not an HTTP response.")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name] = value
            }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }
}
