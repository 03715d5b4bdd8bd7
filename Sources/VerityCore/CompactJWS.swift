import Crypto
import Foundation

/// A JSON Web Signature in compact serialisation (RFC 7515 §7.1), restricted to ES256 (ECDSA P-256 with SHA-256,
/// RFC 7518 §3.4) — the algorithm of device-held keys.
///
/// Parsing checks only the structure; call ``isValidSignature(for:)`` before trusting anything in the token, and
/// only then ``decodePayload(_:)``.
public struct CompactJWS: Sendable {
    /// The longest token accepted by ``init(parsing:)``, in UTF-8 bytes (16 KiB).
    public static let maximumLength = 16 * 1024
    /// The only signature algorithm accepted.
    public static let algorithm = "ES256"

    /// The decoded protected header.
    public let header: JWSHeader
    /// The decoded payload bytes.
    public let payload: [UInt8]
    /// The 64-byte raw signature, `r || s` as 32-byte big-endian integers (RFC 7518 §3.4).
    public let signature: [UInt8]
    /// The signed text: the first two parts of the token exactly as received, `base64url(header).base64url(payload)`.
    public let signingInput: String

    /// Parses a compact JWS without verifying its signature.
    ///
    /// - Parameter token: The token, `header.payload.signature`, each part unpadded base64url.
    /// - Throws: ``JWSError/malformed`` if the token is longer than ``maximumLength``, does not have exactly three
    ///   parts, a part is not base64url, the header is not a JSON object with a string `alg`, the header has a `crit`
    ///   member, or the signature is not 64 bytes; ``JWSError/unsupportedAlgorithm`` if `alg` is not `"ES256"`.
    public init(parsing token: String) throws(JWSError) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else { throw .malformed }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed }
        let headerText = String(decoding: parts[0], as: UTF8.self)
        let payloadText = String(decoding: parts[1], as: UTF8.self)
        let signatureText = String(decoding: parts[2], as: UTF8.self)
        // Padding is not part of a compact JWS; reject it so the signing input is unambiguous.
        guard !token.contains("="),
            let headerBytes = Base64URL.decode(headerText),
            let payload = Base64URL.decode(payloadText),
            let signature = Base64URL.decode(signatureText)
        else { throw .malformed }

        let decoder = JSONDecoder()
        guard let header = try? decoder.decode(JWSHeader.self, from: Data(headerBytes)),
            let extensions = try? decoder.decode(CriticalProbe.self, from: Data(headerBytes))
        else { throw .malformed }
        guard header.alg == Self.algorithm else { throw .unsupportedAlgorithm }
        guard extensions.crit == nil, signature.count == 64 else { throw .malformed }

        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = "\(headerText).\(payloadText)"
    }

    /// Parses a compact JWS without verifying its signature, reporting a refusal as the caller's own error type.
    ///
    /// It accepts and refuses exactly what ``init(parsing:)`` does; a token not signed with ES256 throws
    /// `Failure.unsupportedAlgorithm`, any other refusal `Failure.malformed`.
    ///
    /// - Parameters:
    ///   - token: The token, `header.payload.signature`, each part unpadded base64url.
    ///   - failure: The error type to throw.
    /// - Throws: `Failure.malformed` or `Failure.unsupportedAlgorithm`.
    public init<Failure: JWSParsingFailure>(parsing token: String, failingWith failure: Failure.Type)
        throws(Failure)
    {
        do {
            try self.init(parsing: token)
        } catch .unsupportedAlgorithm {
            throw .unsupportedAlgorithm
        } catch {
            throw .malformed
        }
    }

    /// Signs `payload` with ES256 and returns the compact token.
    ///
    /// The header is JSON with sorted keys and only the members given: `alg` (`"ES256"`), then `cty`, `kid` and
    /// `typ` when not `nil`.
    ///
    /// - Parameters:
    ///   - payload: The bytes to sign, usually UTF-8 JSON.
    ///   - keyID: The `kid` header value, or `nil` to omit it.
    ///   - type: The `typ` header value, or `nil` to omit it.
    ///   - contentType: The `cty` header value, or `nil` to omit it.
    ///   - key: The P-256 private key.
    /// - Returns: `base64url(header).base64url(payload).base64url(r || s)`.
    /// - Throws: An error from the JSON encoder or from Crypto if signing fails.
    public static func sign(
        payload: [UInt8],
        keyID: String?,
        type: String? = "JWT",
        contentType: String? = nil,
        using key: P256.Signing.PrivateKey
    ) throws -> String {
        let header = JWSHeader(alg: algorithm, typ: type, kid: keyID, cty: contentType)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headerJSON = try encoder.encode(header)
        let signingInput = "\(Base64URL.encode(headerJSON)).\(Base64URL.encode(payload))"
        let signature = try key.signature(for: Data(signingInput.utf8))
        return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
    }

    /// Whether the signature is a valid ES256 signature of ``signingInput`` by `key`.
    ///
    /// - Parameter key: The expected signer's public key.
    /// - Returns: `true` only if the signature verifies.
    public func isValidSignature(for key: P256.Signing.PublicKey) -> Bool {
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(ecdsa, for: Data(signingInput.utf8))
    }

    /// Decodes the payload as JSON.
    ///
    /// This does not verify the signature: call ``isValidSignature(for:)`` first.
    ///
    /// - Parameter type: The type to decode.
    /// - Returns: The decoded payload.
    /// - Throws: ``JWSError/invalidPayload`` if the payload is not JSON of that shape.
    public func decodePayload<T: Decodable>(_ type: T.Type) throws(JWSError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(payload))
        } catch {
            throw .invalidPayload
        }
    }

    /// Reads the `crit` header member, whose presence means the token needs extensions Verity does not implement.
    private struct CriticalProbe: Decodable {
        var crit: [String]?
    }
}

extension P256.Signing.PublicKey {
    /// Creates a key from the standard base64 (RFC 4648 §4, with padding) of its DER SubjectPublicKeyInfo, the form
    /// a device sends when it registers.
    ///
    /// - Parameter derBase64: The base64 text.
    /// - Throws: ``PublicKeyEncodingError`` if the text is not base64 or not a P-256 SubjectPublicKeyInfo.
    public init(derBase64: String) throws(PublicKeyEncodingError) {
        guard let der = Data(base64Encoded: derBase64) else { throw .invalidBase64 }
        do {
            try self.init(derRepresentation: der)
        } catch {
            throw .invalidKey
        }
    }

    /// The standard base64 (with padding) of the key's DER SubjectPublicKeyInfo.
    public var derBase64: String {
        derRepresentation.base64EncodedString()
    }
}
