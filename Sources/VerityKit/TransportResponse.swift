import Foundation

/// One HTTP response as a ``Transport`` returns it.
public struct TransportResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: [String: String]
    /// The body, empty when there is none.
    public var body: Data

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - headers: The header fields.
    ///   - body: The body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the header field `name`, compared without regard to case.
    ///
    /// - Parameter name: The field name, for example `"Date"`.
    /// - Returns: The value, or `nil` when the field is absent.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
