import NIOConcurrencyHelpers

/// Wakes the outbox worker's lanes when this node queues a message, so delivery does not wait for the next poll.
/// (Messages queued by other nodes are found by polling.)
final class OutboxSignal: Sendable {
    private struct Waiter {
        var lane: OutboxLane
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        /// Lanes notified while none of their loops was waiting: their next wait returns at once.
        var pending: Set<OutboxLane> = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// Wakes every lane (a lane not waiting now finds the notification on its next wait).
    func notify() {
        let waiters = state.withLockedValue { state in
            let waiting = Set(state.waiters.values.map(\.lane))
            state.pending.formUnion(Set(OutboxLane.allCases).subtracting(waiting))
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// Returns after a `notify()` (also one that came before the call) or after `timeout`.
    func wait(for lane: OutboxLane, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForNotification(lane) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForNotification(_ lane: OutboxLane) async {
        let id = state.withLockedValue { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLockedValue { state in
                    if state.pending.contains(lane) || Task.isCancelled {
                        state.pending.remove(lane)
                        return true
                    }
                    state.waiters[id] = Waiter(lane: lane, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}
