import Foundation

/// `POST /v1/auth/refresh` and `POST /v1/auth/logout`.
public struct RefreshRequest: Codable, Sendable, Equatable {
    public var refreshToken: String

    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }
}
