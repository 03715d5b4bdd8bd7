import Crypto
import Foundation

/// Why a ``TOTP`` configuration was refused.
///
/// ``description`` is a sentence suitable as the `detail` of an HTTP 400 problem response.
public enum TOTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The secret is shorter than ``TOTP/minimumSecretLength`` bytes (RFC 4226 §4 R6 requires 128 bits).
    case secretTooShort
    /// The number of digits is outside ``TOTP/allowedDigits``.
    case invalidDigits
    /// The period is outside ``TOTP/allowedPeriods``.
    case invalidPeriod

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .secretTooShort: "The TOTP secret must be at least \(TOTP.minimumSecretLength) bytes."
        case .invalidDigits:
            "A TOTP code must have \(TOTP.allowedDigits.lowerBound) to \(TOTP.allowedDigits.upperBound) digits."
        case .invalidPeriod:
            "The TOTP period must be \(TOTP.allowedPeriods.lowerBound) to \(TOTP.allowedPeriods.upperBound) seconds."
        }
    }
}
