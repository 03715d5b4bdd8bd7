import NIOConcurrencyHelpers

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
