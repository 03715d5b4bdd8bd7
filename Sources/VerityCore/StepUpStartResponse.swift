import Foundation

/// What a step-up start did: a code went out (`otp`), a push challenge is waiting on the device (`push`), or the
/// user is to type a code from their authenticator app (`totp`).
public struct StepUpStartResponse: Codable, Sendable, Equatable {
    public var method: StepUpMethod
    /// The channel the code went to (`otp` only).
    public var channel: Channel?
    /// Where the code went, masked (`otp` only).
    public var maskedDestination: String?
    /// The push challenge to approve (`push` only).
    public var challengeId: String?
    /// When the code or the challenge expires; `nil` for `totp`, whose codes change every time step.
    public var expiresAt: Date?

    public init(
        method: StepUpMethod, channel: Channel? = nil, maskedDestination: String? = nil, challengeId: String? = nil,
        expiresAt: Date? = nil
    ) {
        self.method = method
        self.channel = channel
        self.maskedDestination = maskedDestination
        self.challengeId = challengeId
        self.expiresAt = expiresAt
    }
}
