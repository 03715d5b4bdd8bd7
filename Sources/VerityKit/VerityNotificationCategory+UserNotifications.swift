// tvOS has neither notification actions nor notification extensions.
#if canImport(UserNotifications) && !os(tvOS)
    import Foundation
    import UserNotifications

    extension VerityNotificationCategory {
        /// The two categories (``standard`` and ``userVerification``) with their actions, as `UNNotificationCategory`.
        ///
        /// - Parameter titles: The button titles, by action identifier; English ones where absent.
        /// - Returns: The categories.
        public static func categories(titles: [String: String] = [:]) -> Set<UNNotificationCategory> {
            Set(
                [standard, userVerification].map { identifier in
                    UNNotificationCategory(
                        identifier: identifier,
                        actions: actions(for: identifier, titles: titles).map(\.notificationAction),
                        intentIdentifiers: [])
                })
        }

        /// Registers ``categories(titles:)`` with the notification center. Call it at launch, before notifications
        /// arrive; it replaces the app's other categories, so an app with its own passes them in `adding`.
        ///
        /// - Parameters:
        ///   - center: The notification center.
        ///   - titles: The button titles, by action identifier.
        ///   - others: The app's own categories, registered with Verity's.
        public static func register(
            on center: UNUserNotificationCenter, titles: [String: String] = [:],
            adding others: Set<UNNotificationCategory> = []
        ) {
            center.setNotificationCategories(categories(titles: titles).union(others))
        }
    }

    extension VerityNotificationCategory.Action {
        /// The `UNNotificationAction` with these options.
        var notificationAction: UNNotificationAction {
            var options: UNNotificationActionOptions = []
            if requiresUnlock { options.insert(.authenticationRequired) }
            if isDestructive { options.insert(.destructive) }
            if opensApp { options.insert(.foreground) }
            return UNNotificationAction(identifier: identifier, title: title, options: options)
        }
    }

    extension NotificationResponseDecision {
        /// Reads a notification response where it arrives (on the main actor in a content extension or a
        /// notification delegate): the result is `Sendable`, for ``VerityPush/respond(to:)``.
        ///
        /// - Parameter response: The response.
        /// - Throws: ``VerityKitError/mapping(_:)`` for a notification that is not Verity's.
        public init(_ response: UNNotificationResponse) throws {
            try self.init(
                actionIdentifier: response.actionIdentifier,
                userInfo: response.notification.request.content.userInfo)
        }
    }

    /// The work of a notification service extension for Verity's notifications: fetch the challenge the
    /// notification names, check it, and show it with the actions it needs; a notification that does not check out
    /// is shown without an Approve action. It answers nothing: a service extension runs before the user sees the
    /// notification.
    ///
    ///     final class NotificationService: UNNotificationServiceExtension {
    ///         let verity = VerityNotificationService(push: VerityPush(configuration: …, store: sharedStore))
    ///         override func didReceive(_ request: UNNotificationRequest,
    ///                                  withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
    ///             verity.didReceive(request, withContentHandler: contentHandler)
    ///         }
    ///     }
    public final class VerityNotificationService: Sendable {
        /// The extension's own ``VerityPush``, over the store it shares with the app.
        public let push: VerityPush

        /// Creates the helper.
        ///
        /// - Parameter push: A `VerityPush` over the store the app shares with the extension.
        public init(push: VerityPush) {
            self.push = push
        }

        /// Rewrites a Verity notification and hands it to `contentHandler`; any other notification is handed on
        /// unchanged.
        ///
        /// - Parameters:
        ///   - request: The notification request the system delivered.
        ///   - contentHandler: The system's content handler, called exactly once.
        public func didReceive(
            _ request: UNNotificationRequest,
            withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
        ) {
            guard let notification = try? push.parsePushPayload(request.content.userInfo),
                let content = request.content.mutableCopy() as? UNMutableNotificationContent
            else {
                contentHandler(request.content)
                return
            }
            let delivery = Delivery(content: content, handler: contentHandler)
            Task { [push] in
                let shown: ChallengeNotificationContent
                do {
                    shown = try await push.notificationContent(for: notification)
                } catch {
                    shown = .unverified
                }
                delivery.deliver(shown)
            }
        }

        /// The content and the system's handler, handed to the one task that delivers them.
        // @unchecked Sendable: the system's content handler may be called from any thread, and the mutable content is
        // created for this delivery and touched only by the task that calls the handler, once.
        private final class Delivery: @unchecked Sendable {
            let content: UNMutableNotificationContent
            let handler: (UNNotificationContent) -> Void

            init(content: UNMutableNotificationContent, handler: @escaping (UNNotificationContent) -> Void) {
                self.content = content
                self.handler = handler
            }

            func deliver(_ shown: ChallengeNotificationContent) {
                if let title = shown.title { content.title = title }
                content.body = shown.body
                content.categoryIdentifier = shown.categoryIdentifier
                handler(content)
            }
        }
    }
#endif
