import AsyncHTTPClient
import Logging
import VerityCore

/// The development push sender: logs that a challenge would have been pushed (devices can pull it), or that an app
/// verification's silent push would have been sent (never its secret: app verification needs APNs or FCM).
public struct ConsolePushSender: PushSender {
    let logger: Logger

    public init(logger: Logger) {
        self.logger = logger
    }

    public func send(_ notification: PushNotification) async throws {
        if let data = notification.silentData {
            logger.notice(
                "Console push: a device would be sent a silent push; configure APNs or FCM to deliver it",
                metadata: [
                    "type": "\(data["type"] ?? "")", "platform": "\(notification.platform.rawValue)",
                    "message": "\(notification.id)",
                ])
            return
        }
        logger.notice(
            "Console push: a device would be told about a challenge",
            metadata: [
                "challenge": "\(notification.challengeId)", "factor": "\(notification.factorId)",
                "platform": "\(notification.platform.rawValue)",
            ])
    }
}
