import Foundation

/// `POST /v1/possession/{id}/otp/finish`.
public struct PossessionCodeRequest: Codable, Sendable, Equatable {
    public var code: String

    public init(code: String) {
        self.code = code
    }
}
