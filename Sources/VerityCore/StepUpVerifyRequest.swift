import Foundation

/// `POST /v1/auth/stepup/verify` (with the session token): the code, or the push challenge once approved.
public struct StepUpVerifyRequest: Codable, Sendable, Equatable {
    /// The code sent by the step-up start, or with `method: totp` the authenticator app's code.
    public var code: String?
    public var challengeId: String?
    /// What `code` is: `otp` (the default) or `totp`.
    public var method: StepUpMethod?

    public init(code: String? = nil, challengeId: String? = nil, method: StepUpMethod? = nil) {
        self.code = code
        self.challengeId = challengeId
        self.method = method
    }
}
