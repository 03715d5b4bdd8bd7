import Foundation
import Logging
import VerityCore

/// What operators may see and do with the outbox: read it, page by page, and send a message that was given up
/// once more. Delivery itself is the worker's (``OutboxWorker``).
struct OutboxService: Sendable {
    let store: OutboxStore
    let signal: OutboxSignal
    let clock: any TimeSource
    let logger: Logger

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
        signal.notify()
        return message
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
