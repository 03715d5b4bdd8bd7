import Foundation

/// How push notifications reach a device.
public enum PushPlatform: String, WireEnum, Sendable {
    case apns
    case fcm
    /// The app pulls pending challenges instead.
    case none
}
