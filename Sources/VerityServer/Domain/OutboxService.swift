import Foundation
import Logging
import VerityCore

/// The outbox's one owner: what operators may see and do with it (read it, page by page, send a message that was
/// given up once more), and the parts that deliver from it, the worker (``OutboxWorker``) and the receiver of
/// providers' status reports (``DeliveryStatusReceiver``), which it builds over its store.
public struct OutboxService: Sendable, UsesRuntime {
    private let store: OutboxStore
    let renderer: MessageRenderer
    let runtime: Runtime

    init(store: OutboxStore, renderer: MessageRenderer, runtime: Runtime) {
        self.store = store
        self.renderer = renderer
        self.runtime = runtime
    }

    /// Messages, newest first (only those to `destination` when given, as stored), with the text as it was (or
    /// will be) delivered: what `verity outbox` prints and what tests read codes from.
    public func messages(destination: String? = nil, limit: Int = 50) async throws -> [(
        message: OutboxMessage, rendered: OutgoingMessage?
    )] {
        // Codes are rendered from their verification; push and webhook messages carry their JSON in `payload`.
        var result: [(OutboxMessage, OutgoingMessage?)] = []
        for message in try await store.messages(destination: destination, limit: limit) {
            result.append((message, try await store.delivery(for: message).flatMap(renderer.render)))
        }
        return result
    }

    /// The worker that delivers through `senders`.
    func worker(
        senders: Senders, configuration: OutboxConfiguration, verifications: VerificationService,
        factors: FactorService, appVerifications: AppVerificationService
    ) -> OutboxWorker {
        OutboxWorker(
            store: store, fallback: fallback(verifications), factors: factors, appVerifications: appVerifications,
            renderer: renderer, senders: senders, configuration: configuration, runtime: runtime)
    }

    /// What reads providers' delivery-status callbacks, authenticated by `settings`.
    func deliveryStatus(settings: DeliveryStatusSettings, verifications: VerificationService) -> DeliveryStatusReceiver
    {
        DeliveryStatusReceiver(settings: settings, store: store, fallback: fallback(verifications), runtime: runtime)
    }

    /// What gives up a code message for good: its code goes again by the project's fallback channel.
    private func fallback(_ verifications: VerificationService) -> CodeFallback {
        CodeFallback(store: store, verifications: verifications)
    }

    /// A page of messages of every project, newest first; `search` is a destination (a phone number or an email
    /// address, normalised; a factor id or a URL as stored).
    func messages(status: OutboxMessage.Status?, search: String?, cursor: String?, limit: Int = 50) async throws
        -> (items: [OutboxMessage], nextCursor: String?)
    {
        try Paging.requireCursor(cursor, prefix: "msg_")
        let destination = search.map { text in (try? Destination(loginId: text).value) ?? text }
        let fetched = try await store.page(status: status, destination: destination, after: cursor, limit: limit + 1)
        let items = Array(fetched.prefix(limit))
        return (items, fetched.count > limit ? items.last?.id : nil)
    }

    /// Queues a dead message again, with its attempts counted from zero.
    ///
    /// - Throws: `not_found` when there is no dead message `id`.
    func retry(id: String) async throws -> OutboxMessage {
        guard let message = try await store.retryDead(id: id, now: clock.now()) else {
            throw VerityError(.notFound, "There is no dead message \(id).")
        }
        logger.info("Outbox message queued again", metadata: ["message": "\(id)"])
        outboxSignal.notify()
        return message
    }

    /// Claims due messages as the worker does, without running one. For tests only: a seam for the claiming rules
    /// (lanes, the per-project cap, leases), which a running worker would hide.
    func claimDue(
        channels: [OutboxChannel], limit: Int, perProject: Int? = nil, excludingProjects: Set<String> = [],
        lease: TimeInterval, now: Date
    ) async throws -> [OutboxMessage] {
        try await store.claimDue(
            channels: channels, limit: limit, perProject: perProject, excludingProjects: excludingProjects,
            lease: lease, now: now)
    }

    /// Messages waiting to be sent.
    func depth() async throws -> Int {
        try await store.pendingCount()
    }

    /// How quickly messages queued in the last `hours` hours were sent.
    func latency(hours: Int) async throws -> DeliveryLatency {
        try await store.deliveryLatency(since: clock.now().addingTimeInterval(-Double(hours) * 3_600))
    }
}
