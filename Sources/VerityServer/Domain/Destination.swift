import VerityCore

/// A validated, normalised destination.
enum Destination: Sendable {
    case phone(PhoneNumber)
    case email(EmailAddress)

    init(_ input: String, channel: Channel) throws {
        switch channel {
        case .sms, .voice, .whatsapp:
            self = .phone(try Self.phoneNumber(input))
        case .email:
            do {
                self = .email(try EmailAddress(parsing: input))
            } catch {
                throw VerityError(.invalidEmail, "\(error)")
            }
        }
    }

    /// A login id, or a destination named without a channel: an email address if it has an `@`, otherwise an E.164
    /// phone number.
    init(loginId: String) throws {
        try self.init(loginId, channel: Self.channel(ofLoginId: loginId))
    }

    /// The channel a login id's codes go by: email for an email address, SMS for anything else.
    static func channel(ofLoginId loginId: String) -> Channel {
        loginId.contains("@") ? .email : .sms
    }

    /// A phone number, or `invalid_phone_number` saying what is wrong with it.
    static func phoneNumber(_ input: String) throws -> PhoneNumber {
        do {
            return try PhoneNumber(parsing: input)
        } catch {
            throw VerityError(.invalidPhoneNumber, "\(error)")
        }
    }

    /// The canonical login key that pending codes, rate limits and user look-ups are keyed on: the E.164 number, or
    /// the email address lowercased as a whole. Case variants of one address are one mailbox (as a user's login ids
    /// already are), so they share one pending code, one set of attempts and one bucket.
    var key: String {
        switch self {
        case .phone(let number): number.e164
        case .email(let address): address.address.lowercased()
        }
    }

    /// The normalised form that is stored and sent to.
    var value: String {
        switch self {
        case .phone(let number): number.e164
        case .email(let address): address.address
        }
    }

    /// The form that may appear in logs.
    var masked: String {
        switch self {
        case .phone(let number): number.masked
        case .email(let address): address.masked
        }
    }
}
