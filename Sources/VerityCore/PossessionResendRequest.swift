import Foundation

/// `POST /v1/possession/{id}/otp/resend` (optional body): the code again, by the same or another phone channel.
public struct PossessionResendRequest: Codable, Sendable, Equatable {
    /// `sms` (the default), `voice` or `whatsapp`; the code stays the same whatever the channel.
    public var channel: Channel?

    public init(channel: Channel? = nil) {
        self.channel = channel
    }
}
