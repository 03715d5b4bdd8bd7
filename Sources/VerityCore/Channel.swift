/// A way of reaching a person with a one-time code.
public enum Channel: String, Codable, Sendable, CaseIterable {
    /// A text message to an E.164 phone number.
    case sms
    /// An email to an address.
    case email
}
