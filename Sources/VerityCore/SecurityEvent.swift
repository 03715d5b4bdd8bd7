import Foundation

/// Something security-relevant that happened to a user's sessions.
public struct SecurityEvent: Codable, Sendable, Equatable {
    /// `sev_…`
    public var id: String
    /// `refresh_token_reused`: a refresh token was presented after it had been used; the session's whole token
    /// family was revoked. `unusual_activity_reported`: a push factor denied a challenge with a signed
    /// ``DenyReason`` ("this wasn't me"); the project's ``UnusualActivityResponse`` was applied.
    public var type: String
    public var userId: String
    public var sessionId: String?
    /// The client address the request came from.
    public var ipAddress: String?
    public var createdAt: Date
    /// The push factor that reported unusual activity.
    public var factorId: String?
    /// The challenge it denied.
    public var challengeId: String?

    public init(
        id: String, type: String, userId: String, sessionId: String?, ipAddress: String?, createdAt: Date,
        factorId: String? = nil, challengeId: String? = nil
    ) {
        self.factorId = factorId
        self.challengeId = challengeId
        self.id = id
        self.type = type
        self.userId = userId
        self.sessionId = sessionId
        self.ipAddress = ipAddress
        self.createdAt = createdAt
    }
}
