import Foundation
import VerityCore

/// A token bucket: up to `capacity` requests at once, refilled at `capacity` per `period`.
public struct RateLimitPolicy: Sendable, Equatable, CustomStringConvertible {
    public var capacity: Int
    public var period: TimeInterval

    public init(capacity: Int, period: TimeInterval) {
        self.capacity = capacity
        self.period = period
    }

    /// Parses `N/s`, `N/m` or `N/h` (for example `10/h`: bursts of 10, 10 more each hour).
    public init(parsing text: String) throws(ConfigurationError) {
        let parts = text.split(separator: "/")
        let periods: [Substring: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard parts.count == 2, let capacity = Int(parts[0]), capacity > 0, let period = periods[parts[1]] else {
            throw ConfigurationError("'\(text)' is not a rate such as 10/h, 5/m or 100/s.")
        }
        self.init(capacity: capacity, period: period)
    }

    public var description: String {
        let unit = [1: "s", 60: "m", 3600: "h", 86_400: "d"][Int(period)] ?? "\(Int(period))s"
        return "\(capacity)/\(unit)"
    }

    var refillPerSecond: Double { Double(capacity) / period }
}
