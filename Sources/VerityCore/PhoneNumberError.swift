/// Why a string is not an acceptable phone number.
///
/// ``description`` is a sentence suitable as the `detail` of an HTTP 400 problem response.
public enum PhoneNumberError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is not written in E.164 form: it lacks the leading `+`, contains characters other than digits
    /// and `space - . ( )`, has no digits, starts with `+0`, or is far too long.
    case notE164
    /// The country calling code after the `+` is not one this service supports.
    case unknownCountryCode
    /// The number has too many digits overall, or the wrong number of digits for its country.
    case invalidLength
    /// The digits do not form a valid number for the country, for example a NANP area code starting with 0 or 1,
    /// or a national trunk prefix `0` kept after the country code.
    case invalidNumber

    /// A human-readable explanation of what is wrong with the number.
    public var description: String {
        switch self {
        case .notE164:
            "The number must be in E.164 format, like +14155550100: a + followed by the country code and the number, "
                + "using only digits, spaces, dashes, dots and parentheses."
        case .unknownCountryCode:
            "The country calling code after the + is not recognised or not supported."
        case .invalidLength:
            "The number has the wrong number of digits for its country."
        case .invalidNumber:
            "The number is not a valid phone number for its country. Check the area code, and drop any leading 0 "
                + "after the country code."
        }
    }
}
