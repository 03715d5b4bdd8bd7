import Foundation

/// Bounds how many test servers the test process runs at once.
///
/// Swift Testing starts every test case at once. On a small machine (CI has 2 cores) a hundred live servers then
/// share the cooperative pool and SQLite's blocking pool, every request of every test crawls, and a request that
/// waits behind nine others for the one writer can go 20 s without a byte and hit the test client's read timeout —
/// though nothing is wrong with the server. Admitting a few servers at a time costs no throughput (the work is the
/// same and the cores were already full) and keeps each test's requests as prompt as a lone run would see them.
///
/// A body that is already inside the gate (a test that runs a second server, or a server inside a server's body)
/// goes straight in: waiting for a second place while holding one could deadlock the run.
public enum ServerGate {
    /// Places: three servers a core, at least four.
    static let gate = Gate(capacity: max(4, 3 * ProcessInfo.processInfo.activeProcessorCount))

    /// Runs `body` holding one place (or none, when this task already holds one).
    public static func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await gate.run(body)
    }
}

/// Lets at most `capacity` bodies run at once; the others wait for a place, first come first served. A body that is
/// already inside the gate goes straight in.
public final class Gate: Sendable {
    private let places: Places
    private let inside = TaskLocal(wrappedValue: false)

    public init(capacity: Int) {
        places = Places(capacity)
    }

    /// Runs `body` holding one place (or none, when this task already holds one).
    public func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if inside.get() { return try await body() }
        await places.take()
        do {
            let result = try await inside.withValue(true) { try await body() }
            await places.give()
            return result
        } catch {
            await places.give()
            throw error
        }
    }

    private actor Places {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(_ count: Int) { free = count }

        func take() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}
