// A notification service extension on VerityKit: it fetches and checks the challenge a notification names and shows
// it with the actions it needs. It answers nothing (a service extension never hears what the user does).
import Foundation
import UserNotifications
import VerityKit

final class NotificationService: UNNotificationServiceExtension {
    // swift-format-ignore: NeverForceUnwrap
    private let verity = VerityNotificationService(
        push: VerityPush(
            configuration: VerityConfiguration(baseURL: URL(string: "https://verity.example.com")!),
            store: KeychainSecureStore(accessGroup: "TEAMID.com.example.shared"),
            installationMarker: UserDefaultsInstallationMarker(suiteName: "group.com.example.app")))

    override func didReceive(
        _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
    ) {
        verity.didReceive(request, withContentHandler: contentHandler)
    }
}
