import Foundation
import Logging
import ServiceLifecycle

/// The node's housekeeping, every `interval`: expires challenges nobody answered (firing their `challenge.expired`
/// webhooks), forgets spent device and enrollment tokens, deletes sessions a week after they ended, and records the
/// console dashboard's counts of each finished day. On
/// PostgreSQL several nodes may run it at once: `SKIP LOCKED` gives each challenge to one of them.
struct HousekeepingService: Service {
    let challenges: ChallengeService
    let factors: FactorService
    let sessions: SessionService
    let verifications: VerificationService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        // Work in flight is never cancelled (a query cut off mid-way can strand a pooled connection); only the
        // pause between rounds ends early when the server shuts down.
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                while try await challenges.expireDue() > 0 {}
                try await factors.purgeSpentTokens()
                try await sessions.purgeEnded()
                try await verifications.recordFinishedDays()
            } catch is DatabaseClosedError {
                return  // the server is stopping and closed the database under the round
            } catch {
                logger.error("Housekeeping failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

extension HousekeepingService: CustomStringConvertible {
    /// Just the name: ServiceLifecycle logs its services at debug level, and this one holds key material.
    var description: String { "HousekeepingService" }
}
