import Crypto
import Foundation
import NIOConcurrencyHelpers

/// What a node last read of each project's session signing keys, so that signing a token and checking one usually
/// need no query and no unsealing.
///
/// A project's entry is read again when it is ``maxAge`` old, when its current key has retired, and when a token
/// names a key it does not hold. Staleness is safe because of the rotation rules: a key rotated in on another node
/// (or by `verity admin signing-keys rotate`) signs only ``SigningKeyService/activationDelay`` (two minutes) after
/// it was published, longer than an entry lives, and a key this node goes on using a little past its retirement
/// stays published for a day after.
final class SigningKeyCache: Sendable {
    /// How long an entry is used before the store is read again.
    static let maxAge: TimeInterval = 60

    /// One project's keys as read at `readAt`.
    struct Entry {
        /// The key that signs now, unsealed, or nil when the project has none yet.
        var current: (record: SigningKeyRecord, key: P256.Signing.PrivateKey)?
        /// The published keys' public halves, by key id.
        var published: [String: P256.Signing.PublicKey]
        var readAt: Date

        /// Whether the entry may still be used at `now`.
        func isFresh(at now: Date) -> Bool {
            guard now.timeIntervalSince(readAt) < SigningKeyCache.maxAge, now >= readAt else { return false }
            if let retiredAt = current?.record.retiredAt, retiredAt <= now { return false }
            return true
        }
    }

    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    /// The project's entry, if one is fresh at `now`.
    func entry(projectId: String, now: Date) -> Entry? {
        entries.withLockedValue { $0[projectId] }.flatMap { $0.isFresh(at: now) ? $0 : nil }
    }

    /// Keeps `entry` as the project's.
    func keep(_ entry: Entry, projectId: String) {
        entries.withLockedValue { $0[projectId] = entry }
    }

    /// Forgets the project's entry (after this node changed its keys).
    func forget(projectId: String) {
        entries.withLockedValue { _ = $0.removeValue(forKey: projectId) }
    }
}
