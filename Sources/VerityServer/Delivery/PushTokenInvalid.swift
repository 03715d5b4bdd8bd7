import Logging
import VerityCore

/// The platform reported that the device token is dead: the factor must stop receiving pushes.
public struct PushTokenInvalid: Error, Sendable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "push token invalid: \(reason)" }
}
