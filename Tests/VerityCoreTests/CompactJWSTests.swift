import Crypto
import Foundation
import Testing

@testable import VerityCore

@Suite("CompactJWS")
struct CompactJWSTests {
    /// A P-256 public key (SPKI DER, base64) whose private half signed ``pythonToken`` with Python `joserfc` 1.6.
    static let pythonPublicKey =
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE74gMjvgWiBeWwYjlcbAaxvcMUmJ0VtrkhnWO/9nGPd1c28EeJIg6ElmCQqlYdblqiFT2S/+ayaM4ELgfFU9U5Q=="
    /// `jws.serialize_compact({"alg":"ES256","typ":"JWT","kid":"python-key"}, claims, key)` in Python.
    static let pythonToken =
        "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InB5dGhvbi1rZXkifQ"
        + ".eyJzdWIiOiJmYWNfMTIzIiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDAzMDAsImp0aSI6ImotMSJ9"
        + ".ZoX1VP_9VUxLq98Elj7h1piOrA9UzjSbVHlxGc5YwBA462OzTl9ESKyCc01zefjwQ96aW9cGcbfpKJ4IETPcrw"

    static let claims = DeviceTokenClaims(sub: "fac_123", iat: 1_700_000_000, exp: 1_700_000_300, jti: "j-1")

    static func json(_ object: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(object))
    }

    /// Builds `base64url(header).base64url(payload).base64url(signature)` from raw parts.
    static func token(header: String, payload: String = "{}", signature: [UInt8] = Array(repeating: 1, count: 64))
        -> String
    {
        [Base64URL.encode(header.utf8), Base64URL.encode(payload.utf8), Base64URL.encode(signature)]
            .joined(separator: ".")
    }

    @Test("verifies a token signed by Python joserfc")
    func verifiesPythonToken() throws {
        let key = try P256.Signing.PublicKey(derBase64: Self.pythonPublicKey)
        let jws = try CompactJWS(parsing: Self.pythonToken)
        #expect(jws.header == JWSHeader(alg: "ES256", typ: "JWT", kid: "python-key"))
        #expect(jws.isValidSignature(for: key))
        #expect(try jws.decodePayload(DeviceTokenClaims.self) == Self.claims)
        #expect(!jws.isValidSignature(for: P256.Signing.PrivateKey().publicKey))
    }

    @Test("signs and verifies a round trip")
    func roundTrip() throws {
        let key = P256.Signing.PrivateKey()
        let token = try CompactJWS.sign(payload: Self.json(Self.claims), keyID: "fac_123", using: key)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header == JWSHeader(alg: "ES256", typ: "JWT", kid: "fac_123", cty: nil))
        #expect(jws.signature.count == 64)
        #expect(jws.signingInput == token.split(separator: ".").prefix(2).joined(separator: "."))
        #expect(jws.isValidSignature(for: key.publicKey))
        #expect(!jws.isValidSignature(for: P256.Signing.PrivateKey().publicKey))
        #expect(try jws.decodePayload(DeviceTokenClaims.self) == Self.claims)
    }

    @Test("writes a sorted, minimal header")
    func headerJSON() throws {
        let key = P256.Signing.PrivateKey()
        let full = try CompactJWS.sign(payload: [], keyID: "k/1", type: "x+jws", contentType: "json", using: key)
        let fullHeader = try #require(full.split(separator: ".").first)
        #expect(
            Base64URL.decode(String(fullHeader))
                == Array(#"{"alg":"ES256","cty":"json","kid":"k/1","typ":"x+jws"}"#.utf8)
        )
        let bare = try CompactJWS.sign(payload: [], keyID: nil, type: nil, using: key)
        let bareHeader = try #require(bare.split(separator: ".").first)
        #expect(Base64URL.decode(String(bareHeader)) == Array(#"{"alg":"ES256"}"#.utf8))
        let empty = try CompactJWS(parsing: bare)
        #expect(empty.payload.isEmpty)
        #expect(empty.isValidSignature(for: key.publicKey))
    }

    @Test("a changed part breaks the signature")
    func tampering() throws {
        let key = P256.Signing.PrivateKey()
        let token = try CompactJWS.sign(payload: Self.json(Self.claims), keyID: "fac_123", using: key)
        let parts = token.split(separator: ".").map(String.init)
        var other = Self.claims
        other.sub = "fac_999"
        let swappedPayload = [parts[0], Base64URL.encode(try Self.json(other)), parts[2]].joined(separator: ".")
        #expect(try !CompactJWS(parsing: swappedPayload).isValidSignature(for: key.publicKey))
        let otherHeader = Base64URL.encode(#"{"alg":"ES256","kid":"fac_999","typ":"JWT"}"#.utf8)
        let swappedHeader = [otherHeader, parts[1], parts[2]].joined(separator: ".")
        #expect(try !CompactJWS(parsing: swappedHeader).isValidSignature(for: key.publicKey))
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[10] ^= 0x01
        let flipped = [parts[0], parts[1], Base64URL.encode(signature)].joined(separator: ".")
        #expect(try !CompactJWS(parsing: flipped).isValidSignature(for: key.publicKey))
        let zero = [parts[0], parts[1], Base64URL.encode([UInt8](repeating: 0, count: 64))].joined(separator: ".")
        #expect(try !CompactJWS(parsing: zero).isValidSignature(for: key.publicKey))
    }

    struct RejectCase: Sendable, CustomTestStringConvertible {
        var name: String
        var token: String
        var error: JWSError
        var testDescription: String { name }
    }

    static let rejectCases: [RejectCase] = [
        .init(name: "empty", token: "", error: .malformed),
        .init(name: "two parts", token: "eyJhbGciOiJFUzI1NiJ9.e30", error: .malformed),
        .init(name: "four parts", token: token(header: #"{"alg":"ES256"}"#) + ".AA", error: .malformed),
        .init(name: "alg none", token: token(header: #"{"alg":"none"}"#), error: .unsupportedAlgorithm),
        .init(
            name: "alg none, empty signature", token: token(header: #"{"alg":"none"}"#, signature: []),
            error: .unsupportedAlgorithm),
        .init(name: "HS256", token: token(header: #"{"alg":"HS256","typ":"JWT"}"#), error: .unsupportedAlgorithm),
        .init(name: "RS256", token: token(header: #"{"alg":"RS256"}"#), error: .unsupportedAlgorithm),
        .init(name: "ES384", token: token(header: #"{"alg":"ES384"}"#), error: .unsupportedAlgorithm),
        .init(name: "lower-case es256", token: token(header: #"{"alg":"es256"}"#), error: .unsupportedAlgorithm),
        .init(name: "no alg", token: token(header: #"{"typ":"JWT"}"#), error: .malformed),
        .init(name: "numeric alg", token: token(header: #"{"alg":256}"#), error: .malformed),
        .init(name: "header not JSON", token: token(header: "ES256"), error: .malformed),
        .init(name: "header an array", token: token(header: #"["ES256"]"#), error: .malformed),
        .init(name: "crit header", token: token(header: #"{"alg":"ES256","crit":["exp"],"exp":1}"#), error: .malformed),
        .init(
            name: "short signature",
            token: token(header: #"{"alg":"ES256"}"#, signature: Array(repeating: 1, count: 63)),
            error: .malformed),
        .init(
            name: "DER signature length",
            token: token(header: #"{"alg":"ES256"}"#, signature: Array(repeating: 1, count: 72)), error: .malformed),
        .init(name: "empty signature", token: token(header: #"{"alg":"ES256"}"#, signature: []), error: .malformed),
        .init(name: "padded part", token: token(header: #"{"alg":"ES256"}"#) + "==", error: .malformed),
        .init(name: "standard base64 characters", token: "eyJhbGciOiJFUzI1NiJ9.e30+.AA", error: .malformed),
        .init(name: "whitespace", token: " " + token(header: #"{"alg":"ES256"}"#), error: .malformed),
        .init(
            name: "too long", token: token(header: #"{"alg":"ES256"}"#, payload: String(repeating: "a", count: 13_000)),
            error: .malformed),
    ]

    @Test("rejects malformed and non-ES256 tokens", arguments: rejectCases)
    func rejects(_ testCase: RejectCase) {
        #expect(throws: testCase.error) {
            try CompactJWS(parsing: testCase.token)
        }
    }

    /// A verifier's own error type, as ``CompactJWS/init(parsing:failingWith:)`` reports refusals in it.
    enum CallerError: JWSParsingFailure, Equatable {
        case malformed
        case unsupportedAlgorithm
    }

    @Test("parsing with the caller's error type refuses the same tokens", arguments: rejectCases)
    func rejectsAsCallersError(_ testCase: RejectCase) {
        let expected: CallerError = testCase.error == .unsupportedAlgorithm ? .unsupportedAlgorithm : .malformed
        #expect(throws: expected) {
            try CompactJWS(parsing: testCase.token, failingWith: CallerError.self)
        }
    }

    @Test("parsing with the caller's error type accepts a valid token")
    func acceptsWithCallersError() throws {
        let jws = try CompactJWS(parsing: Self.pythonToken, failingWith: CallerError.self)
        #expect(jws.header.kid == "python-key")
    }

    @Test("accepts a token right at the size limit")
    func sizeLimit() throws {
        let header = Base64URL.encode(#"{"alg":"ES256"}"#.utf8)
        let signature = Base64URL.encode([UInt8](repeating: 1, count: 64))
        let room = CompactJWS.maximumLength - header.count - signature.count - 2
        let payload = String(repeating: "A", count: room)
        #expect(throws: Never.self) { try CompactJWS(parsing: "\(header).\(payload).\(signature)") }
        #expect(throws: JWSError.malformed) { try CompactJWS(parsing: "\(header).\(payload)A.\(signature)") }
    }

    @Test("decodePayload reports invalidPayload for the wrong shape")
    func invalidPayload() throws {
        let jws = try CompactJWS(parsing: Self.token(header: #"{"alg":"ES256"}"#, payload: #"{"sub":1}"#))
        #expect(throws: JWSError.invalidPayload) { try jws.decodePayload(DeviceTokenClaims.self) }
        let notJSON = try CompactJWS(parsing: Self.token(header: #"{"alg":"ES256"}"#, payload: "hello"))
        #expect(throws: JWSError.invalidPayload) { try notJSON.decodePayload(DeviceTokenClaims.self) }
    }

    @Test(
        "every error has a description",
        arguments: [JWSError.malformed, .unsupportedAlgorithm, .invalidSignature, .invalidPayload])
    func descriptions(_ error: JWSError) {
        #expect(error.description.hasSuffix("."))
    }

    @Test("public keys round-trip through base64 DER")
    func publicKeyDER() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let text = key.derBase64
        #expect(text.hasPrefix("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"))
        #expect(try P256.Signing.PublicKey(derBase64: text).rawRepresentation == key.rawRepresentation)
        #expect(try P256.Signing.PublicKey(derBase64: Self.pythonPublicKey).derBase64 == Self.pythonPublicKey)
    }

    @Test("rejects bad base64 DER public keys")
    func publicKeyDERErrors() throws {
        #expect(throws: PublicKeyEncodingError.invalidBase64) { try P256.Signing.PublicKey(derBase64: "not base64!") }
        #expect(throws: PublicKeyEncodingError.invalidKey) { try P256.Signing.PublicKey(derBase64: "AAAA") }
        // A P-384 SubjectPublicKeyInfo is not a P-256 key.
        let p384 = P384.Signing.PrivateKey().publicKey.derRepresentation.base64EncodedString()
        #expect(throws: PublicKeyEncodingError.invalidKey) { try P256.Signing.PublicKey(derBase64: p384) }
    }

    /// A token signed by ``CompactJWS/sign(payload:keyID:type:contentType:using:)`` with the private key of raw scalar
    /// 0x42…42, which Python `joserfc` 1.6 and `cryptography` 48 both verified.
    static let swiftPublicKey =
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOtOGGpViE5JRa7WT7wVYPtLlhm9ctiYKMBcjf9ibkK/Qlhx+NwdaZ5GjnGH1YpWwK20mVnthXmCqQe4cjoM4jQ=="
    static let swiftToken =
        "eyJhbGciOiJFUzI1NiIsImtpZCI6InN3aWZ0LWtleSIsInR5cCI6IkpXVCJ9"
        + ".eyJleHAiOjE3MDAwMDAzMDAsImlhdCI6MTcwMDAwMDAwMCwianRpIjoiai0xIiwic3ViIjoiZmFjXzEyMyJ9"
        + ".rf9mrHXYoRisA7B3-Fhe2ItZogwktDJJh1t_FS8Y46ZgpZIkWa7kOxHJmuimcgDT_km0Lw_EqDLYcqPJC3dLcQ"

    @Test("still verifies the Swift-signed token that Python accepted")
    func swiftVector() throws {
        let privateKey = try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x42, count: 32))
        #expect(privateKey.publicKey.derBase64 == Self.swiftPublicKey)
        let jws = try CompactJWS(parsing: Self.swiftToken)
        #expect(jws.isValidSignature(for: try P256.Signing.PublicKey(derBase64: Self.swiftPublicKey)))
        #expect(try jws.decodePayload(DeviceTokenClaims.self) == Self.claims)
        // The header bytes Python saw are exactly what sign(…) writes today.
        let token = try CompactJWS.sign(payload: Self.json(Self.claims), keyID: "swift-key", using: privateKey)
        #expect(token.split(separator: ".").prefix(2) == Self.swiftToken.split(separator: ".").prefix(2))
    }
}
