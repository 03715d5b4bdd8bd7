import NIOConcurrencyHelpers
import ServiceLifecycle

/// Wakes long polls (`?wait=`) waiting on a record, a challenge or a possession flow, as soon as this node changes it.
/// A change on another node is seen by the waiter's next look, every ``crossNodePoll``.
final class ChangeSignal: Sendable {
    /// How often a long poll looks at the database for a change another node made.
    static let crossNodePoll: Duration = .milliseconds(250)

    private struct Waiter {
        var recordId: String
        var continuation: CheckedContinuation<Void, Never>
    }

    private let waiters = NIOLockedValueBox<[Int: Waiter]>([:])
    private let nextId = NIOLockedValueBox(0)

    init() {}

    /// Wakes every long poll waiting on `recordId`.
    func notify(_ recordId: String) {
        let woken = waiters.withLockedValue { waiters in
            let matching = waiters.filter { $0.value.recordId == recordId }
            for key in matching.keys { waiters.removeValue(forKey: key) }
            return matching.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// A long poll: from `first`, looks at the record again (`look`, given the last look) each time this node changes it, or every
    /// ``crossNodePoll``, until `settled` holds or `seconds` have passed. A server shutting down gracefully (a deploy's
    /// SIGTERM) ends it at once with what it has, as a long poll that ended early, instead of holding up the shutdown
    /// for up to its wait; clients ask again.
    func poll<Record>(
        _ recordId: String, from first: Record, for seconds: Int, until settled: (Record) -> Bool,
        look: (Record) async throws -> Record
    ) async throws -> Record {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var record = first
        while !settled(record), ContinuousClock.now < deadline, !Task.isShuttingDownGracefully {
            await wait(for: recordId, timeout: min(Self.crossNodePoll, deadline - .now))
            record = try await look(record)
        }
        return record
    }

    /// Returns when this node changes the record, or after `timeout`.
    func wait(for recordId: String, timeout: Duration) async {
        let id = nextId.withLockedValue { value in
            defer { value += 1 }
            return value
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let cancelled = self.waiters.withLockedValue { waiters in
                            if Task.isCancelled { return true }
                            waiters[id] = Waiter(recordId: recordId, continuation: continuation)
                            return false
                        }
                        if cancelled { continuation.resume() }
                    }
                } onCancel: {
                    self.waiters.withLockedValue { $0.removeValue(forKey: id) }?.continuation.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
