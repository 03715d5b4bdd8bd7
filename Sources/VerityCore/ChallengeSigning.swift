import Crypto
import Foundation

/// A device's answer to a push challenge.
public enum ChallengeAnswer: String, Codable, Sendable {
    /// The user approved the request.
    case approved
    /// The user denied the request.
    case denied
}

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

/// What a device signs to answer a push challenge, so the server and every SDK agree byte for byte.
///
/// The device sends a compact JWS (ES256, header `typ` ``tokenType``, `kid` the factor's key identifier) whose
/// payload is this struct as a JSON object with exactly the members ``signedFields``:
///
///     {"challengeId":"…","contentHash":"…","factorId":"…","status":"approved"}
///
/// Verification compares the decoded members, not the JSON bytes, so member order and whitespace do not matter.
public struct ChallengeSigningPayload: Codable, Sendable, Equatable {
    /// The `typ` header of a signed challenge answer, which keeps it from being confused with other device tokens.
    public static let tokenType = "verity-challenge+jws"
    /// The JSON members of the payload, all of which are verified.
    public static let signedFields = ["challengeId", "factorId", "contentHash", "status"]

    /// The challenge being answered.
    public var challengeId: String
    /// The factor (device key) answering.
    public var factorId: String
    /// ``contentHash(message:details:)`` of what the device showed the user.
    public var contentHash: String
    /// The user's answer.
    public var status: ChallengeAnswer

    /// Creates a payload.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge being answered.
    ///   - factorId: The factor answering.
    ///   - contentHash: The hash of the displayed content, from ``contentHash(message:details:)``.
    ///   - status: The user's answer.
    public init(challengeId: String, factorId: String, contentHash: String, status: ChallengeAnswer) {
        self.challengeId = challengeId
        self.factorId = factorId
        self.contentHash = contentHash
        self.status = status
    }

    /// The hash binding an answer to the exact content shown to the user.
    ///
    /// Byte format, to be reproduced exactly by other implementations: take the list of strings
    /// `[message, label₁, value₁, label₂, value₂, …]` (the details in their given order). For each string, append
    /// its UTF-8 byte count as an unsigned 32-bit big-endian integer (4 bytes), then its UTF-8 bytes, with no
    /// Unicode normalisation and no terminator. The result is the base64url (RFC 4648 §5, no `=` padding) of the
    /// SHA-256 of all those bytes — always 43 characters.
    ///
    /// For example, message `"Hi"` with one detail (`"A"`, `""`) hashes the 15 bytes
    /// `00 00 00 02 48 69 00 00 00 01 41 00 00 00 00`.
    ///
    /// - Parameters:
    ///   - message: The challenge message shown to the user.
    ///   - details: The label/value pairs shown to the user, in display order.
    /// - Returns: The 43-character base64url SHA-256 digest.
    public static func contentHash(message: String, details: [(label: String, value: String)]) -> String {
        var hasher = SHA256()
        func append(_ string: String) {
            let bytes = Array(string.utf8)
            // A String of 4 GiB or more cannot be a challenge; clamping keeps the encoding total.
            let length = UInt32(clamping: bytes.count).bigEndian
            withUnsafeBytes(of: length) { hasher.update(bufferPointer: $0) }
            hasher.update(data: bytes)
        }
        append(message)
        for detail in details {
            append(detail.label)
            append(detail.value)
        }
        return Base64URL.encode(hasher.finalize())
    }

    /// Signs this payload as a compact ES256 JWS with `typ` ``tokenType``.
    ///
    /// - Parameters:
    ///   - key: The device's private key.
    ///   - keyID: The `kid` header value identifying the key.
    /// - Returns: The compact token.
    /// - Throws: An error from JSON encoding or from Crypto if signing fails.
    public func sign(using key: P256.Signing.PrivateKey, keyID: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(self)
        return try CompactJWS.sign(payload: Array(json), keyID: keyID, type: Self.tokenType, using: key)
    }

    /// Verifies a signed answer's type and signature and returns its payload, without comparing it to anything.
    ///
    /// Use it to learn what a device signed (for example its ``status``); use ``verify(_:expected:key:)`` to accept
    /// an answer.
    ///
    /// - Parameters:
    ///   - token: The compact JWS from the device.
    ///   - key: The factor's public key.
    /// - Returns: The signed payload.
    /// - Throws: ``ChallengeVerificationError`` other than ``ChallengeVerificationError/mismatchedFields(_:)``.
    public static func verifiedPayload(
        _ token: String,
        key: P256.Signing.PublicKey
    ) throws(ChallengeVerificationError) -> ChallengeSigningPayload {
        let jws = try CompactJWS(parsing: token, failingWith: ChallengeVerificationError.self)
        guard jws.header.typ == tokenType else { throw .wrongType }
        guard jws.isValidSignature(for: key) else { throw .invalidSignature }
        do {
            return try jws.decodePayload(ChallengeSigningPayload.self)
        } catch {
            throw .invalidPayload
        }
    }

    /// Accepts a signed answer only if it is signed by `key` and every field in ``signedFields`` equals `expected`.
    ///
    /// Checks run in this order: structure and algorithm, `typ`, signature, payload shape, then the fields, so a
    /// field mismatch is only reported for a genuine signature.
    ///
    /// - Parameters:
    ///   - token: The compact JWS from the device.
    ///   - expected: The payload the server expects: its challenge, the factor, the hash of the content it sent, and
    ///     the answer the device claims.
    ///   - key: The factor's public key.
    /// - Returns: The verified answer (`expected.status`).
    /// - Throws: ``ChallengeVerificationError``; ``ChallengeVerificationError/mismatchedFields(_:)`` lists the
    ///   fields that differ.
    @discardableResult
    public static func verify(
        _ token: String,
        expected: ChallengeSigningPayload,
        key: P256.Signing.PublicKey
    ) throws(ChallengeVerificationError) -> ChallengeAnswer {
        let signed = try verifiedPayload(token, key: key)
        var mismatched: [String] = []
        if signed.challengeId != expected.challengeId { mismatched.append("challengeId") }
        if signed.factorId != expected.factorId { mismatched.append("factorId") }
        if signed.contentHash != expected.contentHash { mismatched.append("contentHash") }
        if signed.status != expected.status { mismatched.append("status") }
        guard mismatched.isEmpty else { throw .mismatchedFields(mismatched) }
        return signed.status
    }
}
