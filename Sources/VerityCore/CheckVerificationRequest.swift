import Foundation

/// `POST /v1/verifications/check`: name the verification by `id` or by destination `to`.
public struct CheckVerificationRequest: Codable, Sendable {
    public var id: String?
    public var to: String?
    public var code: String

    public init(id: String? = nil, to: String? = nil, code: String) {
        self.id = id
        self.to = to
        self.code = code
    }
}
