import Foundation
import Logging
import ServiceLifecycle
import VerityCore

/// How the outbox is drained.
public struct OutboxConfiguration: Sendable, Equatable {
    /// How often to look for messages queued by other nodes or due for a retry.
    public var pollInterval: Duration = .seconds(1)
    /// Deliveries one lane keeps in flight at once (it claims more when half of them have ended).
    public var batchSize = 20
    /// Webhook deliveries to one project's endpoints at once: a slow or black-holed endpoint holds at most this many.
    public var webhooksPerProject = 4
    /// How long a claimed message is reserved for the worker sending it.
    public var lease: TimeInterval = 60
    /// Attempts before a message is given up (`dead`).
    public var maxAttempts = 8
    /// The first retry's delay; each further retry doubles it, up to `maxBackoff`.
    public var baseBackoff: TimeInterval = 2
    public var maxBackoff: TimeInterval = 900

    public init() {}

    func backoff(afterAttempt attempt: Int) -> TimeInterval {
        min(maxBackoff, baseBackoff * pow(2, Double(max(attempt - 1, 0))))
    }
}
