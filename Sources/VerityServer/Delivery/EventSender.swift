import AsyncHTTPClient
import Crypto
import Foundation
import Logging

/// Delivers webhook events.
public protocol EventSender: Sendable {
    func send(_ event: WebhookEvent) async throws
}
