/// Why a string is not an acceptable email address.
///
/// ``description`` is a sentence suitable as the `detail` of an HTTP 400 problem response.
public enum EmailAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is empty or only whitespace.
    case empty
    /// The address is longer than 254 characters.
    case tooLong
    /// The address does not contain exactly one `@`.
    case invalidFormat
    /// The part before the `@` is empty, longer than 64 characters, contains a character that is not allowed, or
    /// has a leading, trailing or doubled dot.
    case invalidLocalPart
    /// The part after the `@` is not a valid domain name with at least two labels.
    case invalidDomain
    /// The address contains non-ASCII characters; internationalised addresses are not supported.
    case internationalized

    /// A human-readable explanation of what is wrong with the address.
    public var description: String {
        switch self {
        case .empty:
            "The email address is empty."
        case .tooLong:
            "The email address is too long: it may have at most 254 characters."
        case .invalidFormat:
            "The email address must contain exactly one @, like name@example.com."
        case .invalidLocalPart:
            "The part before the @ must be 1 to 64 letters, digits, dots or the symbols !#$%&'*+-/=?^_`{|}~, "
                + "and may not start or end with a dot or contain two dots in a row."
        case .invalidDomain:
            "The part after the @ must be a domain name like example.com: labels of letters, digits and hyphens "
                + "separated by dots, not starting or ending with a hyphen, with a top-level domain that is not "
                + "all digits."
        case .internationalized:
            "Email addresses with non-ASCII characters are not supported. Use the ASCII (xn--) form of the domain."
        }
    }
}
