import Foundation

/// The state of a one-time-code verification.
public enum VerificationStatus: String, WireEnum, Sendable {
    case pending
    case approved
    case canceled
    case expired
    /// Too many wrong codes: the verification can no longer be approved.
    case maxAttemptsReached = "max_attempts_reached"
}

/// `POST /v1/verifications`
public struct StartVerificationRequest: Codable, Sendable {
    /// An E.164 phone number for `sms`, `voice` and `whatsapp`, an email address for `email`.
    public var to: String
    public var channel: Channel
    /// A BCP 47 language tag for the message text (`en`, `es`, `fr`, `de`, `pt`, `ja`); others fall back to `en`.
    public var locale: String?

    public init(to: String, channel: Channel, locale: String? = nil) {
        self.to = to
        self.channel = channel
        self.locale = locale
    }
}

/// A verification as the API returns it.
public struct VerificationResponse: Codable, Sendable, Equatable {
    public var id: String
    public var to: String
    public var channel: Channel
    public var status: VerificationStatus
    public var locale: String
    public var sendAttempts: Int
    public var checkAttempts: Int
    public var createdAt: Date
    public var expiresAt: Date

    public init(
        id: String, to: String, channel: Channel, status: VerificationStatus, locale: String, sendAttempts: Int,
        checkAttempts: Int, createdAt: Date, expiresAt: Date
    ) {
        self.id = id
        self.to = to
        self.channel = channel
        self.status = status
        self.locale = locale
        self.sendAttempts = sendAttempts
        self.checkAttempts = checkAttempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// `POST /v1/verifications/check`: name the verification by `id` or by destination `to`.
public struct CheckVerificationRequest: Codable, Sendable {
    public var id: String?
    public var to: String?
    public var code: String

    public init(id: String? = nil, to: String? = nil, code: String) {
        self.id = id
        self.to = to
        self.code = code
    }
}

/// The answer to a check: `valid` is true only when this check approved the verification.
public struct CheckVerificationResponse: Codable, Sendable, Equatable {
    public var id: String
    public var status: VerificationStatus
    public var valid: Bool

    public init(id: String, status: VerificationStatus, valid: Bool) {
        self.id = id
        self.status = status
        self.valid = valid
    }
}
