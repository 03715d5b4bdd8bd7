import Logging
import VerityCore

/// Delivers push notifications of one platform.
public protocol PushSender: Sendable {
    /// Sends one notification. Throws ``DeliveryError``; `.permanent` stops retries. A token the platform says
    /// is no longer valid (APNs 410 Unregistered, FCM UNREGISTERED) throws ``PushTokenInvalid``.
    func send(_ notification: PushNotification) async throws
}
