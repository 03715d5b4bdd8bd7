import Foundation

/// A short-lived, single-user enrollment token, handed to the app.
public struct EnrollmentToken: Codable, Sendable, Equatable {
    public var token: String
    public var userId: String
    public var expiresAt: Date

    public init(token: String, userId: String, expiresAt: Date) {
        self.token = token
        self.userId = userId
        self.expiresAt = expiresAt
    }
}
