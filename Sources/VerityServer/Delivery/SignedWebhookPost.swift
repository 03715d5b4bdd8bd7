import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// One signed JSON `POST` to a customer's endpoint: the shared wire format of every Verity webhook.
///
/// Headers: `Content-Type: application/json`, `Verity-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
/// `"<t>.<raw body>"` (see ``WebhookSignature``) and `Verity-Message-Id`, the same on every retry so the receiver
/// can drop duplicates. 2xx is success; 408, 429, 5xx, network errors and timeouts are transient; any other status
/// is permanent, with the reason `webhook <status>`.
struct SignedWebhookPost: Sendable {
    static let messageIDHeaderName = "Verity-Message-Id"

    let httpClient: HTTPClient
    /// Checked before each request for endpoints a tenant chose; nil for the operator's own (the SMS webhook).
    var addresses: OutboundAddressPolicy?
    let logger: Logger
    let now: @Sendable () -> Date

    /// Posts `payload` as JSON with sorted keys (what the operator's gateways receive); throws ``DeliveryError``
    /// (or `CancellationError` when the task is cancelled).
    func post(
        url: String, secret: String, json payload: some Encodable, messageId: String, timeout: Duration, what: String
    ) async throws {
        let body = try ProviderJSON.encode(payload, what: "webhook payload")
        try await post(url: url, secret: secret, body: body, messageId: messageId, timeout: timeout, what: what)
    }

    /// Posts `body`; throws ``DeliveryError`` (or `CancellationError` when the task is cancelled).
    func post(url: String, secret: String, body: [UInt8], messageId: String, timeout: Duration, what: String)
        async throws
    {
        guard Self.isHTTPURL(url) else {
            throw DeliveryError(.permanent, "webhook url is not an absolute http(s) url")
        }
        let timestamp = Int(now().timeIntervalSince1970.rounded(.down))
        try await send(
            url: url, body: body,
            headers: [
                ("Content-Type", "application/json"),
                (
                    WebhookSignature.headerName,
                    WebhookSignature.header(secret: secret, timestamp: timestamp, body: body)
                ),
            ],
            messageId: messageId, timeout: timeout, what: what)
    }

    /// Posts `body` with `headers` (its type and signature) and `Verity-Message-Id`, under the same rules.
    func send(
        url: String, body: [UInt8], headers: [(String, String)], messageId: String, timeout: Duration, what: String
    )
        async throws
    {
        guard Self.isHTTPURL(url) else {
            throw DeliveryError(.permanent, "webhook url is not an absolute http(s) url")
        }
        try await addresses?.requirePublic(url)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.headers.add(name: Self.messageIDHeaderName, value: messageId)
        request.body = .bytes(ByteBuffer(bytes: body))

        var logger = self.logger
        logger[metadataKey: "message.id"] = "\(messageId)"
        let status = try await exchange(request, timeout: timeout, logger: logger)
        guard (200..<300).contains(status) else {
            logger.debug("webhook refused \(what)", metadata: ["http.status": "\(status)"])
            throw DeliveryError(Self.kind(ofStatus: status), "webhook \(status)")
        }
        logger.debug("webhook accepted \(what)", metadata: ["http.status": "\(status)"])
    }

    /// Whether a URL is absolute, with an `http` or `https` scheme and a host.
    static func isHTTPURL(_ string: String) -> Bool {
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(), let host = url.host else {
            return false
        }
        return (scheme == "http" || scheme == "https") && !host.isEmpty
    }

    /// 408, 429 and 5xx are worth retrying; other statuses are not (a redirect included: it is never followed).
    static func kind(ofStatus status: Int) -> DeliveryError.Kind {
        switch status {
        case 408, 429, 500..<600: .transient
        default: .permanent
        }
    }

    /// Sends the request and drains the response within `timeout`; returns the status code.
    private func exchange(_ request: HTTPClientRequest, timeout: Duration, logger: Logger) async throws -> Int {
        let (response, _) = try await ProviderHTTP.exchange(
            request, provider: "webhook", timeout: timeout, httpClient: httpClient, logger: logger)
        return Int(response.status.code)
    }
}
