import Foundation

/// `POST /v1/possession/{id}/otp/start`, `…/link/start` and `…/otp/change-number`: the phone number, when the
/// backend gave none or it changes.
public struct PossessionPhoneRequest: Codable, Sendable, Equatable {
    public var phoneNumber: String?
    /// How a mobile flow's code goes: `sms` (the default), `voice` or `whatsapp`. A desktop flow's link goes by SMS.
    public var channel: Channel?

    public init(phoneNumber: String? = nil, channel: Channel? = nil) {
        self.phoneNumber = phoneNumber
        self.channel = channel
    }
}
