// A notification content extension on VerityKit: its action buttons approve, deny or report "this wasn't me". The
// response is read on the main actor into a `Sendable` decision, which the extension's own VerityPush carries out.
import Foundation
import UIKit
import UserNotifications
import UserNotificationsUI
import VerityKit

final class NotificationViewController: UIViewController, UNNotificationContentExtension {
    // swift-format-ignore: NeverForceUnwrap
    private let push = VerityPush(
        configuration: VerityConfiguration(baseURL: URL(string: "https://verity.example.com")!),
        store: KeychainSecureStore(accessGroup: "TEAMID.com.example.shared"),
        installationMarker: UserDefaultsInstallationMarker(suiteName: "group.com.example.app"))

    func didReceive(_ notification: UNNotification) {
        title = notification.request.content.title
    }

    func didReceive(_ response: UNNotificationResponse) async -> UNNotificationContentExtensionResponseOption {
        guard let decision = try? NotificationResponseDecision(response) else { return .dismissAndForwardAction }
        do {
            _ = try await push.respond(to: decision)
            return .dismiss
        } catch {
            // The prompt was cancelled, or the challenge is gone: the app shows what happened.
            return .dismissAndForwardAction
        }
    }
}
