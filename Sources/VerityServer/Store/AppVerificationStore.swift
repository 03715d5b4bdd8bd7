import Foundation
import SQLKit

/// The silent pushes of app verification: queued in the outbox, addressed to the proof's id.
struct AppVerificationStore: Sendable {
    let database: Database

    /// Queues the silent push of the proof `proofId`; `payload` is its notification without the secret.
    func queuePush(id: String, proofId: String, payload: String, projectId: String, now: Date) async throws {
        try await database.transaction { sql in
            try await QueuedMessage.enqueue(
                [QueuedMessage(id: id, channel: .appVerification, destination: proofId, payload: payload)],
                projectId: projectId, in: sql, now: now)
        }
    }
}
