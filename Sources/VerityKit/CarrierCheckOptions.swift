import Foundation

/// Turns on the carrier check for ``VerityPossession``: on a phone, it first asks the operator to confirm the number
/// over mobile data, and sends the code by SMS only when that does not work.
public struct CarrierCheckOptions: Sendable {
    /// How long the front-channel step may take before the code is sent instead.
    public static let defaultTimeout: Duration = .seconds(10)

    /// Opens the operator's pages over mobile data.
    public var connection: any CellularConnection
    /// How long the front-channel step may take.
    public var timeout: Duration
    /// Waits for the timeout; it throws when its task is cancelled.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// Creates the options.
    ///
    /// - Parameters:
    ///   - connection: The cellular connection; by default Network.framework's on Apple platforms, none elsewhere.
    ///   - timeout: How long the front-channel step may take.
    ///   - sleep: Waits for the timeout.
    public init(
        connection: any CellularConnection = Self.defaultConnection, timeout: Duration = defaultTimeout,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.connection = connection
        self.timeout = timeout
        self.sleep = sleep
    }

    /// Network.framework's cellular connection where the platform has it, otherwise ``NoCellularConnection``.
    public static var defaultConnection: any CellularConnection {
        #if canImport(Network)
            NetworkCellularConnection()
        #else
            NoCellularConnection()
        #endif
    }
}
