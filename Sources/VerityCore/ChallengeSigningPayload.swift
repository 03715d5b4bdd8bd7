import Crypto
import Foundation

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
    /// The JSON members every payload has, all of which are verified.
    public static let signedFields = ["challengeId", "factorId", "contentHash", "status"]
    /// The members a payload has when the answer states them, verified like ``signedFields`` (absent and present
    /// differ): which key signed, how the owner verified, why they denied, and what their verification gave.
    public static let statementFields = ["keyType", "amr", "reason", "userVerificationResult"]

    /// The challenge being answered.
    public var challengeId: String
    /// The factor (device key) answering.
    public var factorId: String
    /// ``contentHash(message:details:)`` of what the device showed the user.
    public var contentHash: String
    /// The user's answer.
    public var status: ChallengeAnswer
    /// Which of the factor's keys signed; absent means ``FactorKeyType/proofOfPossession``.
    public var keyType: FactorKeyType?
    /// How the owner verified, when the user-verification key signed (`face`, `fpt`, `pin`).
    public var amr: [UserVerificationMethod]?
    /// Why the owner denied, when they reported unusual activity.
    public var reason: DenyReason?
    /// What happened when the device asked its owner to verify, when it asked.
    public var userVerificationResult: UserVerificationResult?

    /// Creates a payload.
    ///
    /// - Parameters:
    ///   - challengeId: The challenge being answered.
    ///   - factorId: The factor answering.
    ///   - contentHash: The hash of the displayed content, from ``displayedContentHash(message:details:context:)``.
    ///   - status: The user's answer.
    ///   - keyType: The key that signs, when it is not the proof-of-possession key.
    ///   - amr: How the owner verified, for an answer by the user-verification key.
    ///   - reason: Why the owner denied, for a report of unusual activity.
    ///   - userVerificationResult: What the owner's verification gave, when the device asked for it.
    public init(
        challengeId: String, factorId: String, contentHash: String, status: ChallengeAnswer,
        keyType: FactorKeyType? = nil, amr: [UserVerificationMethod]? = nil, reason: DenyReason? = nil,
        userVerificationResult: UserVerificationResult? = nil
    ) {
        self.challengeId = challengeId
        self.factorId = factorId
        self.contentHash = contentHash
        self.status = status
        self.keyType = keyType
        self.amr = amr
        self.reason = reason
        self.userVerificationResult = userVerificationResult
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
        displayedContentHash(message: message, details: details, context: nil)
    }

    /// The hash binding an answer to the exact content shown to the user, context included.
    ///
    /// Without a context it is ``contentHash(message:details:)``. With one, the bytes start with the marker
    /// `FF FF FF FF 02` (a length no message can have, so the two forms never collide), followed by the strings
    /// `[message, count(details), label₁, value₁, …, location, client, app, time, count(textItems), item₁, …]`, each
    /// encoded as above: counts in decimal, absent strings empty, `time` the decimal Unix seconds (empty when absent).
    ///
    /// - Parameters:
    ///   - message: The challenge message shown to the user.
    ///   - details: The label/value pairs shown to the user, in display order.
    ///   - context: Where, when and from which app, as shown to the user.
    /// - Returns: The 43-character base64url SHA-256 digest.
    public static func displayedContentHash(
        message: String, details: [(label: String, value: String)], context: ChallengeContext?
    ) -> String {
        var hasher = SHA256()
        func append(_ string: String) {
            let bytes = Array(string.utf8)
            // A String of 4 GiB or more cannot be a challenge; clamping keeps the encoding total.
            let length = UInt32(clamping: bytes.count).bigEndian
            withUnsafeBytes(of: length) { hasher.update(bufferPointer: $0) }
            hasher.update(data: bytes)
        }
        if let context {
            hasher.update(data: [0xFF, 0xFF, 0xFF, 0xFF, 0x02])
            append(message)
            append(String(details.count))
            for detail in details {
                append(detail.label)
                append(detail.value)
            }
            append(context.location ?? "")
            append(context.client ?? "")
            append(context.app ?? "")
            append(context.time.map { String(Int64($0.timeIntervalSince1970.rounded(.down))) } ?? "")
            let items = context.textItems ?? []
            append(String(items.count))
            items.forEach(append)
            return Base64URL.encode(hasher.finalize())
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
        if signed.keyType != expected.keyType { mismatched.append("keyType") }
        if signed.amr != expected.amr { mismatched.append("amr") }
        if signed.reason != expected.reason { mismatched.append("reason") }
        if signed.userVerificationResult != expected.userVerificationResult {
            mismatched.append("userVerificationResult")
        }
        guard mismatched.isEmpty else { throw .mismatchedFields(mismatched) }
        return signed.status
    }
}
