import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// What the senders that call a provider's HTTP API share: bounded request/response exchanges and safe log values.
enum ProviderHTTP {
    /// Sends `request` and reads up to 64 KiB of the response (draining the rest) within `timeout`.
    ///
    /// Throws a transient ``DeliveryError`` named after `provider` on timeouts and transport errors, and
    /// `CancellationError` when the task is cancelled.
    static func exchange(
        _ request: HTTPClientRequest,
        provider: String,
        timeout: Duration,
        httpClient: HTTPClient,
        logger: Logger
    ) async throws -> (response: HTTPClientResponse, body: ByteBuffer) {
        do {
            return try await withThrowingTaskGroup(of: (HTTPClientResponse, ByteBuffer)?.self) { group in
                group.addTask {
                    let response = try await httpClient.execute(request, timeout: TimeAmount(timeout), logger: logger)
                    var body = ByteBuffer()
                    for try await var chunk in response.body where body.readableBytes < 64 * 1024 {
                        body.writeBuffer(&chunk)
                    }
                    return (response, body)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    throw DeliveryError(.transient, "\(provider) timed out after \(timeout)")
                }
                return result
            }
        } catch let error as DeliveryError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw DeliveryError(.transient, "\(provider) timed out after \(timeout)")
        } catch {
            if Task.isCancelled { throw CancellationError() }
            logger.debug("\(provider) request failed", metadata: ["error": "\(String(reflecting: error))"])
            let description = (error as? HTTPClientError)?.description ?? String(describing: error)
            throw DeliveryError(.transient, "\(provider) request failed: \(description)")
        }
    }

    /// A device token shortened for logs: its first 6 and last 4 characters, enough to correlate, too little to use.
    static func mask(_ token: String) -> String {
        guard token.count > 12 else { return "…" }
        return "\(token.prefix(6))…\(token.suffix(4))"
    }

    /// `base` without trailing slashes.
    static func trimmed(_ base: String) -> String {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        return String(base)
    }
}
