import Foundation

/// Exchanges one HTTP/1.1 request over TLS on the device's cellular interface, for the carrier check: the operator
/// recognises the phone number by the mobile-data connection, so the request must not go over Wi-Fi.
///
/// `NetworkCellularConnection` is the real one, on Apple platforms (Network.framework); ``NoCellularConnection``
/// stands in elsewhere, and tests inject a scripted one.
public protocol CellularConnection: Sendable {
    /// Connects to `host`:`port` over TLS on the cellular interface, sends `request`, and returns what the server
    /// answered up to the end of its header block (the body is not needed) or until it closed the connection.
    ///
    /// - Parameters:
    ///   - request: One HTTP/1.1 request, `Connection: close`.
    ///   - host: The server's host name.
    ///   - port: The TCP port.
    /// - Returns: The bytes received.
    /// - Throws: ``CarrierCheckError/noCellularPath`` when there is no mobile-data path,
    ///   ``CarrierCheckError/failed(_:)`` for another failure; it ends promptly when its task is cancelled.
    func exchange(_ request: Data, host: String, port: Int) async throws -> Data
}

/// The ``CellularConnection`` of a platform without one: there is never a cellular path.
public struct NoCellularConnection: CellularConnection {
    /// Creates the connection.
    public init() {}

    /// Always throws ``CarrierCheckError/noCellularPath``.
    public func exchange(_ request: Data, host: String, port: Int) async throws -> Data {
        throw CarrierCheckError.noCellularPath
    }
}
