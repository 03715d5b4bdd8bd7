import Foundation

/// `POST /v1/auth/app-verification` (with ``AuthHeaders/project``): asks the server to prove that the caller is the
/// project's real app, by sending a silent push with a secret to the push token the app registered with APNs or FCM.
///
/// Only the app installed on a device receives its silent pushes, so an app that can send the secret back is the
/// real one. A project that requires it (`requiresAppVerification`) sends sign-in, step-up and possession codes only
/// to requests that carry a proof in ``AuthHeaders/appVerification``.
public struct AppVerificationRequest: Codable, Sendable, Equatable {
    /// ``PushPlatform/apns`` or ``PushPlatform/fcm``.
    public var pushPlatform: PushPlatform
    /// The APNs device token (hex) or FCM registration token.
    public var pushToken: String
    /// The app's bundle id (the APNs topic) or package name, when it is not the server's default.
    public var appId: String?

    public init(pushPlatform: PushPlatform, pushToken: String, appId: String? = nil) {
        self.pushPlatform = pushPlatform
        self.pushToken = pushToken
        self.appId = appId
    }
}
