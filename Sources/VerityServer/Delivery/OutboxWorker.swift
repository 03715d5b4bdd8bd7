import Foundation
import Logging
import ServiceLifecycle
import VerityCore

/// Drains the outbox: claims due messages, renders and sends them, records the outcome; one loop per lane.
///
/// A lifecycle service: it starts with the server and, on graceful shutdown, finishes the deliveries in hand.
struct OutboxWorker: Service, UsesRuntime {
    private let store: OutboxStore
    /// Sends a code again by the project's fallback channel when its delivery fails for good.
    let fallback: CodeFallback
    let factors: FactorService
    let appVerifications: AppVerificationService
    let renderer: MessageRenderer
    let senders: Senders
    let configuration: OutboxConfiguration
    let runtime: Runtime

    init(
        store: OutboxStore, fallback: CodeFallback, factors: FactorService,
        appVerifications: AppVerificationService, renderer: MessageRenderer, senders: Senders,
        configuration: OutboxConfiguration, runtime: Runtime
    ) {
        self.store = store
        self.fallback = fallback
        self.factors = factors
        self.appVerifications = appVerifications
        self.renderer = renderer
        self.senders = senders
        self.configuration = configuration
        self.runtime = runtime
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for lane in OutboxLane.allCases { group.addTask { await drain(lane) } }
            }
        } onGracefulShutdown: {
            outboxSignal.notify()
        }
    }

    /// What ended in a lane's task group.
    private enum Ended {
        case delivery(projectId: String)
        case wait
    }

    /// Keeps up to `batchSize` of the lane's deliveries in flight, and claims more as soon as half the slots are
    /// free: a provider that is slow to answer holds only the slots of its own messages, never the whole lane.
    ///
    /// On the webhooks lane a project with deliveries still in flight gets no more until they end, so one tenant's
    /// slow endpoint holds at most ``OutboxConfiguration/webhooksPerProject`` slots.
    private func drain(_ lane: OutboxLane) async {
        await withTaskGroup(of: Ended.self) { group in
            var inFlight: [String: Int] = [:]  // deliveries by project
            var waiting = false
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let free = configuration.batchSize - inFlight.values.reduce(0, +)
                if free * 2 >= configuration.batchSize {
                    do {
                        let busy = lane == .webhooks ? Set(inFlight.keys) : []
                        let claimed = try await claim(lane, limit: free, excludingProjects: busy)
                        for message in claimed {
                            inFlight[message.projectId, default: 0] += 1
                            group.addTask {
                                await deliver(message)
                                return .delivery(projectId: message.projectId)
                            }
                        }
                    } catch is DatabaseClosedError {
                        break  // the server is stopping and closed the database under the poll
                    } catch {
                        logger.error("Outbox poll failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                if !waiting {
                    waiting = true
                    group.addTask {
                        await outboxSignal.wait(for: lane, timeout: configuration.pollInterval)
                        return .wait
                    }
                }
                switch await group.next() {
                case .delivery(let projectId)?:
                    inFlight[projectId] = inFlight[projectId].flatMap { $0 > 1 ? $0 - 1 : nil }
                case .wait?:
                    waiting = false
                    // As often as the lane is woken (a poll, a message queued here): the gauge, not every delivery.
                    if lane == .messages { await updateOutboxDepth() }
                case nil: return
                }
            }
            // Graceful shutdown: the task group waits for the deliveries in hand.
        }
    }

    private func updateOutboxDepth() async {
        do {
            metrics.setOutboxDepth(try await store.pendingCount())
        } catch is DatabaseClosedError {
            // The server is stopping.
        } catch {
            logger.error("Outbox poll failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    /// Claims up to `limit` of the lane's due messages, none of `excludingProjects`.
    private func claim(_ lane: OutboxLane, limit: Int, excludingProjects: Set<String>) async throws -> [OutboxMessage] {
        // Most polls find nothing: asking a reader first keeps them off the single writer.
        guard try await store.hasDue(channels: lane.channels, now: clock.now()) else { return [] }
        return try await store.claimDue(
            channels: lane.channels, limit: limit,
            perProject: lane == .webhooks ? configuration.webhooksPerProject : nil,
            excludingProjects: excludingProjects, lease: configuration.lease, now: clock.now())
    }

    private func deliver(_ message: OutboxMessage) async {
        var metadata: Logger.Metadata = [
            "message": "\(message.id)", "channel": "\(message.channel.rawValue)", "attempt": "\(message.attempts)",
        ]
        do {
            guard let delivery = try await store.delivery(for: message) else {
                try await giveUp(message, reason: "the project no longer exists")
                return
            }
            let name: String
            var providerMessageId: String?
            do {
                switch try prepare(delivery) {
                case .code(let outgoing):
                    let (sender, senderName) = senders.sender(for: outgoing.channel)
                    name = senderName
                    metadata["sender"] = "\(name)"
                    providerMessageId = try await sender.submit(outgoing)
                case .push(let notification):
                    name = senders.pushName
                    metadata["sender"] = "\(name)"
                    try await senders.push.send(notification)
                case .event(let event):
                    name = "webhook"
                    try await senders.events.send(event)
                case .skip(let reason):
                    try await giveUp(message, reason: reason)
                    return
                }
            } catch let error as PushTokenInvalid {
                if let factor = delivery.factor, let token = factor.pushToken {
                    try await factors.forgetPushToken(token, of: factor.id)
                }
                try await giveUp(message, reason: error.description)
                return
            } catch {
                try await recordFailure(message, delivery: delivery, error: error, metadata: metadata)
                return
            }
            try await store.markSent(
                id: message.id, sender: name, providerMessageId: providerMessageId, now: clock.now())
            metrics.messageDelivered(channel: message.channel, outcome: "sent")
            logger.info("Message sent", metadata: metadata)
        } catch {
            // The store failed; the lease expires and another attempt picks the message up.
            logger.error(
                "Outbox bookkeeping failed",
                metadata: metadata.merging(["error": "\(String(reflecting: error))"]) { $1 })
        }
    }

    /// What to send for a message, or why there is nothing worth sending any more.
    private enum Prepared {
        case code(OutgoingMessage)
        case push(PushNotification)
        case event(WebhookEvent)
        case skip(String)
    }

    private func prepare(_ delivery: OutboxStore.Delivery) throws -> Prepared {
        let message = delivery.message
        let now = clock.now()
        switch message.channel {
        case .sms, .email, .voice, .whatsapp:
            // A code that can no longer be used would only confuse the person.
            guard let verification = delivery.verification, verification.status(at: now) == .pending,
                let outgoing = renderer.render(delivery)
            else { return .skip("the verification is no longer pending") }
            return .code(outgoing)
        case .push:
            var notification = try JSONDecoder().decode(PushNotification.self, from: Data((message.payload ?? "").utf8))
            guard let factor = delivery.factor, factor.status == .verified else {
                return .skip("the factor no longer exists")
            }
            guard let token = factor.pushToken, let platform = factor.pushPlatform, platform != .none else {
                return .skip("the factor has no push token")
            }
            guard Double(notification.expiresAt) > now.timeIntervalSince1970 else {
                return .skip("the challenge expired before it could be pushed")
            }
            notification.platform = platform
            notification.token = token
            notification.appId = factor.appId
            notification.apnsEnvironment = factor.apnsEnvironment
            return .push(notification)
        case .appVerification:
            var notification = try JSONDecoder().decode(PushNotification.self, from: Data((message.payload ?? "").utf8))
            guard Double(notification.expiresAt) > now.timeIntervalSince1970 else {
                return .skip("the app verification expired before it could be pushed")
            }
            // The secret is made as it is sent, so the outbox never holds it.
            notification.silentData?[AppVerificationPush.secretKey] = appVerifications.secret(
                for: message.destination, projectId: message.projectId)
            return .push(notification)
        case .webhook, .twilioWebhook:
            guard let secret = delivery.webhookSecret else { return .skip("the project has no webhook secret") }
            return .event(
                WebhookEvent(
                    id: message.id, url: message.destination, secret: secret, body: message.payload ?? "{}",
                    format: message.channel == .twilioWebhook ? .twilio : .verity))
        }
    }

    private func giveUp(_ message: OutboxMessage, reason: String) async throws {
        try await store.markFailed(id: message.id, reason: reason, retryAt: nil)
        metrics.messageDelivered(channel: message.channel, outcome: "dead")
    }

    private func recordFailure(
        _ message: OutboxMessage, delivery: OutboxStore.Delivery, error: any Error, metadata: Logger.Metadata
    ) async throws {
        let reason = (error as? DeliveryError)?.reason ?? "unexpected error: \(type(of: error))"
        let permanent = (error as? DeliveryError)?.kind == .permanent
        var metadata = metadata
        metadata["reason"] = "\(reason)"
        if permanent || message.attempts >= configuration.maxAttempts {
            let outcome = try await fallback.giveUp(message, delivery: delivery, reason: reason)
            metrics.messageDelivered(channel: message.channel, outcome: "dead")
            if case .fellBack(let channel) = outcome {
                metadata["fallback"] = "\(channel.rawValue)"
                logger.error("Message given up; its code goes by the fallback channel", metadata: metadata)
            } else {
                logger.error("Message given up", metadata: metadata)
            }
        } else {
            let retryAt = clock.now().addingTimeInterval(configuration.backoff(afterAttempt: message.attempts))
            try await store.markFailed(id: message.id, reason: reason, retryAt: retryAt)
            metrics.messageDelivered(channel: message.channel, outcome: "retry")
            logger.warning("Message will be retried", metadata: metadata)
        }
    }
}

extension OutboxWorker: CustomStringConvertible {
    /// Just the name: ServiceLifecycle logs its services at debug level, and the worker holds the senders' clients
    /// and credentials.
    var description: String { "OutboxWorker" }
}
