import Foundation

/// `POST /v1/auth/otp/verify`: name the sign-in by `loginId` or by `verificationId`, and give the code.
public struct OTPVerifyRequest: Codable, Sendable, Equatable {
    public var loginId: String?
    public var verificationId: String?
    public var code: String

    public init(loginId: String? = nil, verificationId: String? = nil, code: String) {
        self.loginId = loginId
        self.verificationId = verificationId
        self.code = code
    }
}
