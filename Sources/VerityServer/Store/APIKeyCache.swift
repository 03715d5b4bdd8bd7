import NIOConcurrencyHelpers

/// The projects of API keys this process has looked up, kept between requests only while it can tell that neither
/// `api_keys` nor `projects` changed since.
///
/// On PostgreSQL (``PostgresBackend/followKeyChanges(into:)``) a trigger on both tables sends a notification on
/// channel ``channel`` with every committed change, whoever makes it (a node, `verity admin key revoke`, an
/// operator's own SQL); each server listens on one connection and empties the cache when one arrives. The cache is
/// trusted only while that connection is proven alive: the listener sends itself a probe every ``probeInterval``, and
/// the cache is used only until ``lease`` after the last probe it heard. PostgreSQL delivers one connection's
/// notifications in commit order, so hearing a probe proves every change committed before it was heard too. A
/// look-up that raced a change is not kept (``Ticket``). Unknown keys are never kept, so a new key needs no
/// notification and random keys cannot fill the cache.
///
/// SQLite has no such channel (another process, the CLI, writes the same file unseen), so there the triggers count
/// changes in the one-row table `key_epoch` instead, and a kept key is used only when the request's first statement
/// reads the epoch it was kept at: one small read in place of the key's look-up and its project's decoding.
final class APIKeyCache: Sendable {
    /// The notification channel of key and project changes.
    static let channel = "verity_api_keys"
    /// How often the listener sends itself a probe.
    static let probeInterval: Duration = .milliseconds(500)
    /// How long after the last probe it heard the cache is still used: past it, a silent connection counts as lost.
    static let lease: Duration = .milliseconds(1500)
    /// The most keys kept; more empties the cache (keys are few, each project has a handful).
    static let capacity = 10_000

    /// Taken before a look-up: its result is kept only if nothing changed in between.
    struct Ticket: Sendable {
        fileprivate let generation: UInt64
    }

    private struct Entry {
        var found: (project: Project, keyId: String)
        /// The SQLite `key_epoch` it was looked up at (nil on PostgreSQL).
        var epoch: Int?
    }

    private struct State {
        /// Bumped by every change and every loss of the channel; a look-up that started before is not kept.
        var generation: UInt64 = 0
        /// Until when the channel is known to be heard (nil: not listening).
        var heardUntil: ContinuousClock.Instant?
        var entries: [String: Entry] = [:]

        /// Whether the channel was heard within the lease.
        var isHeard: Bool { heardUntil.map { ContinuousClock.now < $0 } ?? false }

        mutating func keep(_ entry: Entry, hash: String) {
            if entries.count >= APIKeyCache.capacity { entries.removeAll() }
            entries[hash] = entry
        }
    }

    private let state = NIOLockedValueBox(State())

    /// The project and key id kept for a key's hash, while the channel is heard.
    func lookup(hash: String) -> (project: Project, keyId: String)? {
        state.withLockedValue { state in state.isHeard ? state.entries[hash]?.found : nil }
    }

    /// The project and key id kept for a key's hash at `epoch`, the SQLite `key_epoch` just read.
    func lookup(hash: String, epoch: Int) -> (project: Project, keyId: String)? {
        state.withLockedValue { state in
            guard let entry = state.entries[hash], entry.epoch == epoch else { return nil }
            return entry.found
        }
    }

    /// Keeps what a look-up found at `epoch`, the SQLite `key_epoch` read before it.
    func remember(_ found: (project: Project, keyId: String), hash: String, epoch: Int) {
        state.withLockedValue { state in state.keep(Entry(found: found, epoch: epoch), hash: hash) }
    }

    /// A ticket for a look-up about to run, or nil when the cache is not in use.
    func ticket() -> Ticket? {
        state.withLockedValue { state in state.isHeard ? Ticket(generation: state.generation) : nil }
    }

    /// Keeps what a look-up found, unless a change or a loss of the channel came after its ticket.
    func remember(_ found: (project: Project, keyId: String), hash: String, ticket: Ticket) {
        state.withLockedValue { state in
            guard state.generation == ticket.generation else { return }
            state.keep(Entry(found: found, epoch: nil), hash: hash)
        }
    }

    /// A key or project changed somewhere: forget everything.
    func changed() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }

    /// The listener heard its own probe: the channel is alive now. After a silence longer than the lease (changes
    /// may have been missed) the cache starts empty.
    func heardProbe() {
        state.withLockedValue { state in
            let now = ContinuousClock.now
            if state.heardUntil.map({ now >= $0 }) ?? true {
                state.generation &+= 1
                state.entries.removeAll()
            }
            state.heardUntil = now + Self.lease
        }
    }

    /// The listening connection ended: nothing kept is trusted any more.
    func stoppedListening() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.heardUntil = nil
            state.entries.removeAll()
        }
    }

    /// Whether the cache is in use (the channel heard within the lease).
    var isListening: Bool { ticket() != nil }

    /// How many keys are kept (tests).
    var count: Int { state.withLockedValue { $0.entries.count } }
}
