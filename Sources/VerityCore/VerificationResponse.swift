import Foundation

/// A verification as the API returns it.
public struct VerificationResponse: Codable, Sendable, Equatable {
    public var id: String
    public var to: String
    public var channel: Channel
    public var status: VerificationStatus
    public var locale: String
    public var sendAttempts: Int
    public var checkAttempts: Int
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        id: String, to: String, channel: Channel, status: VerificationStatus, locale: String, sendAttempts: Int,
        checkAttempts: Int, createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.to = to
        self.channel = channel
        self.status = status
        self.locale = locale
        self.sendAttempts = sendAttempts
        self.checkAttempts = checkAttempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
