import Foundation

/// Which APNs servers a device token belongs to: an app built for development gets sandbox tokens, an App Store or
/// TestFlight build production ones.
public enum APNsEnvironment: String, WireEnum, Sendable {
    /// `api.push.apple.com`.
    case production
    /// `api.sandbox.push.apple.com`.
    case sandbox
}
