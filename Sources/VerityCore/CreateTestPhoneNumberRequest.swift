import Foundation

/// `POST /v1/test-numbers` (API key).
public struct CreateTestPhoneNumberRequest: Codable, Sendable, Equatable {
    public var phoneNumber: String
    /// 4 to 10 digits.
    public var code: String

    public init(phoneNumber: String, code: String) {
        self.phoneNumber = phoneNumber
        self.code = code
    }
}
