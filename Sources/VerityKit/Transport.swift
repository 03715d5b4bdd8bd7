import Foundation

/// Sends VerityKit's HTTP requests.
///
/// ``URLSessionTransport`` is the default; inject another to route requests through the app's own networking stack
/// or, in tests, to answer with scripted responses. A transport reports only transport failures by throwing (no
/// connection, timeout, TLS); every HTTP answer, whatever its status, is returned as a ``TransportResponse``.
public protocol Transport: Sendable {
    /// Sends `request` and returns the server's answer.
    ///
    /// - Parameter request: The request to send.
    /// - Returns: The response, for any HTTP status.
    /// - Throws: When no HTTP response could be obtained.
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
