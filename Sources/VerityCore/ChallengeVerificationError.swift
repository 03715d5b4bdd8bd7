import Crypto
import Foundation

/// Why a signed challenge answer was refused by ``ChallengeSigningPayload/verify(_:expected:key:)``.
///
/// The cases separate a token that is broken or not signed by the device's key (``malformed``,
/// ``unsupportedAlgorithm``, ``wrongType``, ``invalidSignature``, ``invalidPayload``) from a genuine device signature
/// over something other than what the server expected (``mismatchedFields(_:)``), which may mean the device was shown
/// different content or answered another challenge. ``description`` is a sentence suitable as a problem `detail`.
public enum ChallengeVerificationError: JWSParsingFailure, Sendable, Equatable, CustomStringConvertible {
    /// The token is not a well-formed compact JWS (see ``JWSError/malformed``).
    case malformed
    /// The token is not signed with ES256.
    case unsupportedAlgorithm
    /// The token's `typ` header is not ``ChallengeSigningPayload/tokenType``, so it was signed for another purpose.
    case wrongType
    /// The signature does not verify with the factor's public key.
    case invalidSignature
    /// The signature is valid but the payload is not a challenge answer.
    case invalidPayload
    /// The signature is valid but these signed fields (names from ``ChallengeSigningPayload/signedFields``, in that
    /// order) differ from what the server expected.
    case mismatchedFields([String])

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .malformed: JWSError.malformed.description
        case .unsupportedAlgorithm: JWSError.unsupportedAlgorithm.description
        case .wrongType: "The token is not a signed challenge answer."
        case .invalidSignature: "The challenge answer's signature does not verify with the device's key."
        case .invalidPayload: "The signed challenge answer does not have the expected fields."
        case .mismatchedFields(let fields):
            "The signed challenge answer does not match the challenge: \(fields.joined(separator: ", "))."
        }
    }
}
