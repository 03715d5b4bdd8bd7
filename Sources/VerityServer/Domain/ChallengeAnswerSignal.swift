import NIOConcurrencyHelpers

/// Wakes long-poll requests waiting on a challenge as soon as this node records its answer.
final class ChallengeAnswerSignal: Sendable {
    private struct Waiter {
        var challengeId: String
        var continuation: CheckedContinuation<Void, Never>
    }

    private let waiters = NIOLockedValueBox<[Int: Waiter]>([:])
    private let nextId = NIOLockedValueBox(0)

    init() {}

    func notify(_ challengeId: String) {
        let woken = waiters.withLockedValue { waiters in
            let matching = waiters.filter { $0.value.challengeId == challengeId }
            for key in matching.keys { waiters.removeValue(forKey: key) }
            return matching.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns when the challenge is answered on this node, or after `timeout`.
    func wait(for challengeId: String, timeout: Duration) async {
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
                            waiters[id] = Waiter(challengeId: challengeId, continuation: continuation)
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
