import Foundation

/// A test phone number: sign-in codes are never sent to it, the fixed code always works and no rate limit
/// applies. For app review and automated tests only.
public struct TestPhoneNumber: Codable, Sendable, Equatable {
    public var phoneNumber: String
    public var code: String
    public var createdAt: Date

    public init(phoneNumber: String, code: String, createdAt: Date) {
        self.phoneNumber = phoneNumber
        self.code = code
        self.createdAt = createdAt
    }
}
