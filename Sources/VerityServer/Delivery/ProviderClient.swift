import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// How a sender reaches its provider: the HTTP client it calls through, where it logs, and the clock it reads.
/// `Senders.make` builds one for every configured sender; tests give each sender their own.
public struct ProviderClient: Sendable {
    /// The client requests go through; whoever made it owns it and shuts it down.
    public let httpClient: HTTPClient
    /// Where the sender logs; never given a secret, a message body or a whole token or number.
    public let logger: Logger
    /// The clock: for provider tokens' `iat`, signature timestamps and message lifetimes.
    public let now: @Sendable () -> Date

    /// Creates a provider client.
    public init(httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.httpClient = httpClient
        self.logger = logger
        self.now = now
    }

    /// ``ProviderHTTP/exchange(_:provider:timeout:httpClient:logger:)`` through this client, logging to `logger`
    /// (the sender's, with the message's metadata).
    func exchange(_ request: HTTPClientRequest, provider: String, timeout: Duration, logger: Logger) async throws
        -> (response: HTTPClientResponse, body: ByteBuffer)
    {
        try await ProviderHTTP.exchange(
            request, provider: provider, timeout: timeout, httpClient: httpClient, logger: logger)
    }
}
