import AsyncHTTPClient
import Foundation
import Logging

/// One event for the project's webhook endpoint (`challenge.approved`, `challenge.denied`, `challenge.expired`).
public struct WebhookEvent: Sendable, Equatable {
    /// The outbox message id, sent as `Verity-Message-Id`.
    public var id: String
    public var url: String
    public var secret: String
    /// The JSON event document.
    public var body: String
}

/// Delivers webhook events.
public protocol EventSender: Sendable {
    func send(_ event: WebhookEvent) async throws
}

/// Posts events to the project's endpoint, signed with the project's webhook secret.
public struct HTTPEventSender: EventSender {
    let post: SignedWebhookPost

    public init(httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        post = SignedWebhookPost(httpClient: httpClient, logger: logger, now: now)
    }

    public func send(_ event: WebhookEvent) async throws {
        try await post.post(
            url: event.url, secret: event.secret, body: Array(event.body.utf8), messageId: event.id,
            timeout: .seconds(15), what: "event")
    }
}
