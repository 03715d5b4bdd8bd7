import VerityCore

/// Why a message could not be delivered.
public struct DeliveryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable { case transient, permanent }
    public var kind: Kind
    /// A short reason for the outbox record and the logs. Must not contain the message body or secrets.
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(kind): \(reason)" }
}
