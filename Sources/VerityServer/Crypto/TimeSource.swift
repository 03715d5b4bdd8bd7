import Foundation

/// Where the time comes from.
public protocol TimeSource: Sendable {
    func now() -> Date
}
