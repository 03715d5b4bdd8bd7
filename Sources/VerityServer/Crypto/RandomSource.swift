import Foundation

/// Where randomness comes from: the system's CSPRNG in production, a seeded generator in tests.
public protocol RandomSource: Sendable {
    func bytes(count: Int) -> [UInt8]
}
