/// A way of reaching a person with a one-time code.
public enum Channel: String, WireEnum, Sendable {
    /// A text message to an E.164 phone number.
    case sms
    /// An email to an address.
    case email
    /// A phone call to an E.164 number that speaks the code.
    case voice
    /// A WhatsApp message (an authentication template with a copy-code button) to an E.164 number.
    case whatsapp

    /// Whether the channel reaches a phone number (every channel but email). The phone channels share one pending
    /// code per number: asking for a call after an SMS sends the same code by call.
    public var reachesPhone: Bool { self != .email }
}
