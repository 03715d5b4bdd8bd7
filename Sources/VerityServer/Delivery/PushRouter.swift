import AsyncHTTPClient
import Logging
import VerityCore

/// Sends each notification with its platform's sender; platforms without one go to the console.
public struct PushRouter: PushSender {
    var apns: (any PushSender)?
    var fcm: (any PushSender)?
    var console: ConsolePushSender

    public init(apns: (any PushSender)?, fcm: (any PushSender)?, console: ConsolePushSender) {
        self.apns = apns
        self.fcm = fcm
        self.console = console
    }

    public func send(_ notification: PushNotification) async throws {
        switch notification.platform {
        case .apns: try await (apns ?? console).send(notification)
        case .fcm: try await (fcm ?? console).send(notification)
        case .none: try await console.send(notification)
        }
    }
}
