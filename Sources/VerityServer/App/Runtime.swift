import Logging

/// What every part of one node shares and none owns: the time, randomness and the ids drawn from it, the metrics,
/// the log, and the node's signals (the outbox's wake-up, change notifications and the long-poll cap).
///
/// Built once in the composition root (``Verity``) and handed whole to each service, which keeps its own
/// collaborators (its store above all) beside it.
struct Runtime: Sendable {
    let clock: any TimeSource
    let random: any RandomSource
    let identifiers: Identifiers
    let metrics: VerityMetrics
    let logger: Logger
    /// Wakes the outbox workers when a message is queued.
    let outboxSignal: OutboxSignal
    /// Wakes long polls when a challenge or a possession flow changes.
    let changes: ChangeSignal
    /// The node's long polls (challenge and possession `?wait=`), capped.
    let longPolls: LongPollGate

    init(
        clock: any TimeSource, random: any RandomSource, metrics: VerityMetrics, logger: Logger,
        maxLongPolls: Int
    ) {
        self.clock = clock
        self.random = random
        self.identifiers = Identifiers(random: random)
        self.metrics = metrics
        self.logger = logger
        self.outboxSignal = OutboxSignal()
        self.changes = ChangeSignal()
        self.longPolls = LongPollGate(capacity: maxLongPolls)
    }
}

/// A part built over the node's ``Runtime``, which reads the time, ids, metrics, the log and the signals from it.
protocol UsesRuntime {
    var runtime: Runtime { get }
}

extension UsesRuntime {
    var clock: any TimeSource { runtime.clock }
    var random: any RandomSource { runtime.random }
    var identifiers: Identifiers { runtime.identifiers }
    var metrics: VerityMetrics { runtime.metrics }
    var logger: Logger { runtime.logger }
    var outboxSignal: OutboxSignal { runtime.outboxSignal }
    var changes: ChangeSignal { runtime.changes }
    var longPolls: LongPollGate { runtime.longPolls }
}
