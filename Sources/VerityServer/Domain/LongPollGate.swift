import NIOConcurrencyHelpers

/// Caps the long polls (`?wait=`) one node holds at once: each holds a connection and a task that looks at the
/// database until the answer comes.
///
/// Past the cap a request is answered at once with the current state, as if it had asked not to wait. A long poll
/// may always end before its answer, so clients already ask again; nobody gets an error, and a flood of waits costs
/// the node one look-up each instead of a held task. For the same reason a server that is shutting down ends its
/// long polls with the current state (``ChangeSignal/poll(_:from:for:until:look:)``).
final class LongPollGate: Sendable {
    /// The default cap of long polls a node holds at once (`VERITY_MAX_LONG_POLLS`).
    static let defaultCapacity = 1000

    let capacity: Int
    private let held = NIOLockedValueBox(0)

    init(capacity: Int = LongPollGate.defaultCapacity) {
        self.capacity = capacity
    }

    /// How many long polls the node holds now.
    var holding: Int { held.withLockedValue { $0 } }

    /// Runs `body` with `wait` when the node has room for one more long poll, with nil (answer now) when it holds
    /// ``capacity`` already or `wait` asks for no wait.
    func admit<T>(wait: Int?, _ body: (Int?) async throws -> T) async throws -> T {
        guard let wait, wait > 0 else { return try await body(wait) }
        let admitted = held.withLockedValue { held in
            guard held < capacity else { return false }
            held += 1
            return true
        }
        guard admitted else { return try await body(nil) }
        defer { held.withLockedValue { $0 -= 1 } }
        return try await body(wait)
    }
}
