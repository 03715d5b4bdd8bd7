import Foundation
import Logging
import ServiceLifecycle

/// Expires challenges nobody answered (firing their `challenge.expired` webhooks), forgets spent device tokens, and
/// deletes sessions a week after they expired or were revoked. On PostgreSQL several nodes may run it at once:
/// `SKIP LOCKED` gives each challenge to one of them.
struct ChallengeExpiryService: Service {
    /// How long an ended session (and its refresh tokens) is kept, for security-event investigation.
    static let sessionRetention: TimeInterval = 7 * 86_400

    let challenges: ChallengeService
    let factors: FactorStore
    let sessions: SessionStore
    let clock: any TimeSource
    let interval: Duration
    let logger: Logger

    func run() async throws {
        // Work in flight is never cancelled (a query cut off mid-way can strand a pooled connection); only the
        // pause between rounds ends early when the server shuts down.
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                while try await challenges.expireDue() > 0 {}
                try await factors.purgeExpired(before: clock.now())
                try await sessions.purge(before: clock.now().addingTimeInterval(-Self.sessionRetention))
            } catch {
                logger.error("Challenge expiry failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

extension ChallengeExpiryService: CustomStringConvertible {
    /// Just the name: ServiceLifecycle logs its services at debug level, and this one holds key material.
    var description: String { "ChallengeExpiryService" }
}
