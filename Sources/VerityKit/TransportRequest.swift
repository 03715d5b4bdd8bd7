import Foundation

/// One HTTP request as VerityKit hands it to a ``Transport``.
public struct TransportRequest: Sendable, Equatable {
    /// The HTTP methods the Verity device API uses.
    public enum Method: String, Sendable, Equatable {
        /// `GET`.
        case get = "GET"
        /// `POST`.
        case post = "POST"
        /// `PATCH`.
        case patch = "PATCH"
        /// `PUT`.
        case put = "PUT"
        /// `DELETE`.
        case delete = "DELETE"
    }

    /// The HTTP method.
    public var method: Method
    /// The absolute URL, query included.
    public var url: URL
    /// The header fields, by name as VerityKit wrote them.
    public var headers: [String: String]
    /// The body, or `nil` for none.
    public var body: Data?
    /// Seconds this request needs at least before a transport gives up on it, when that is more than usual (a long
    /// poll that the server may hold open this long); `nil` for the transport's own timeout.
    public var timeout: TimeInterval?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - url: The absolute URL.
    ///   - headers: The header fields.
    ///   - body: The body, or `nil` for none.
    ///   - timeout: The least time the request needs before timing out, or `nil` for the transport's default.
    public init(
        method: Method, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The value of the header field `name`, compared without regard to case.
    ///
    /// - Parameter name: The field name, for example `"Authorization"`.
    /// - Returns: The value, or `nil` when the field is absent.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
