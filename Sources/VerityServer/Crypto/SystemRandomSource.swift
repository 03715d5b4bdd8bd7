import Foundation

/// The operating system's cryptographically secure generator (`getrandom` on Linux).
public struct SystemRandomSource: RandomSource {
    public init() {}

    public func bytes(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
