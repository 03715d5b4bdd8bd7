// A stand-in for Apple's UserNotificationsUI, for type-checking VerityKit's samples on Linux. Never ships, never
// runs. Transcribed from developer.apple.com/documentation/usernotificationsui/<symbol>.
import Foundation
import UserNotifications

// https://developer.apple.com/documentation/usernotificationsui/unnotificationcontentextensionresponseoption:
// `enum UNNotificationContentExtensionResponseOption: UInt, @unchecked Sendable`
public enum UNNotificationContentExtensionResponseOption: UInt, @unchecked Sendable {
    case doNotDismiss = 0
    case dismiss = 1
    case dismissAndForwardAction = 2
}

// https://developer.apple.com/documentation/usernotificationsui/unnotificationcontentextension:
// `@MainActor protocol UNNotificationContentExtension: NSObjectProtocol`. `didReceive(_:)` with a notification is
// required; the response handler is an Objective-C `optional` requirement, which Swift on Linux cannot declare, so it
// is a requirement with a default implementation here (it may be left out, as on Apple platforms).
@MainActor
public protocol UNNotificationContentExtension: NSObjectProtocol {
    // https://developer.apple.com/documentation/usernotificationsui/unnotificationcontentextension/didreceive(_:)-5enak
    func didReceive(_ notification: UNNotification)
    // https://developer.apple.com/documentation/usernotificationsui/unnotificationcontentextension/didreceive(_:completionhandler:)
    // imported with its `async` variant
    func didReceive(_ response: UNNotificationResponse) async -> UNNotificationContentExtensionResponseOption
}

extension UNNotificationContentExtension {
    public func didReceive(_ response: UNNotificationResponse) async -> UNNotificationContentExtensionResponseOption {
        .doNotDismiss
    }
}
