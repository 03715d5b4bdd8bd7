import Foundation

/// The answer to ``AppVerificationRequest``: the secret is on its way in a silent push.
public struct AppVerificationStarted: Codable, Sendable, Equatable {
    /// The verification's id (`apv_…`); the silent push names it too.
    public var id: String
    /// Until when the proof works.
    public var expiresAt: Date

    public init(id: String, expiresAt: Date) {
        self.id = id
        self.expiresAt = expiresAt
    }
}
