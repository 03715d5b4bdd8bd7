import Crypto
import Foundation
import Testing

@testable import VerityCore

@Suite("ChallengeSigning")
struct ChallengeSigningTests {
    static let details: [(label: String, value: String)] = [("Location", "Zürich, CH"), ("Device", "iPhone 🍏")]
    /// Computed independently in Python (length-prefixed UTF-8, SHA-256, unpadded base64url).
    static let unicodeHash = "GjGzNrwcKH7Ac1Ol3JcJzTNB6W2KsCsSWqKFnUZmmts"

    static func payload(status: ChallengeAnswer = .approved) -> ChallengeSigningPayload {
        ChallengeSigningPayload(
            challengeId: "chl_1",
            factorId: "fac_123",
            contentHash: ChallengeSigningPayload.contentHash(message: "Sign in to Verity?", details: details),
            status: status
        )
    }

    @Test("contentHash matches vectors computed in Python")
    func contentHashVectors() {
        #expect(
            ChallengeSigningPayload.contentHash(message: "Sign in to Verity?", details: Self.details)
                == Self.unicodeHash)
        #expect(
            ChallengeSigningPayload.contentHash(message: "Hi", details: [("A", "")])
                == "ijLsHh3-w60WjSez5oFYDwPWgPdxOtK2ZvaUuwjOKos")
        // SHA-256 of the four bytes 00 00 00 00.
        #expect(
            ChallengeSigningPayload.contentHash(message: "", details: [])
                == "3z9hmASpL9tAVxktxD3XSOp3itxSvEmM6AUkwBS4ERk")
    }

    @Test("contentHash is the documented byte format")
    func contentHashFormat() {
        let bytes: [UInt8] = [0, 0, 0, 2, 0x48, 0x69, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]
        #expect(
            ChallengeSigningPayload.contentHash(message: "Hi", details: [("A", "")])
                == Base64URL.encode(SHA256.hash(data: bytes)))
        #expect(ChallengeSigningPayload.contentHash(message: "x", details: Self.details).count == 43)
    }

    @Test("detail order and boundaries matter")
    func contentHashOrder() {
        let hash = ChallengeSigningPayload.contentHash
        let base = hash("Sign in?", [("A", "1"), ("B", "2")])
        #expect(hash("Sign in?", [("B", "2"), ("A", "1")]) != base)
        #expect(hash("Sign in?", [("A", "2"), ("B", "1")]) != base)
        #expect(hash("Sign in?", [("1", "A"), ("2", "B")]) != base)
        #expect(hash("Sign in?", [("A", "1")]) != base)
        #expect(hash("Sign in?", [("A", "1"), ("B", "2"), ("", "")]) != base)
        // The length prefixes keep shifted boundaries apart.
        #expect(hash("ab", [("c", "d")]) != hash("a", [("bc", "d")]))
        #expect(hash("a", [("b", "")]) != hash("ab", []))
        #expect(hash("Sign in?", [("A", "1"), ("B", "2")]) == base)
    }

    @Test("unicode is hashed as UTF-8 without normalisation")
    func contentHashUnicode() {
        let hash = ChallengeSigningPayload.contentHash
        let precomposed = "Z\u{FC}rich"
        let decomposed = "Zu\u{308}rich"
        #expect(precomposed == decomposed)  // Swift string equality is canonical…
        #expect(hash(precomposed, []) != hash(decomposed, []))  // …but the hash is over the exact bytes.
        #expect(hash("🍏", []) == Base64URL.encode(SHA256.hash(data: [0, 0, 0, 4, 0xF0, 0x9F, 0x8D, 0x8F])))
    }

    @Test("signs and verifies a round trip", arguments: [ChallengeAnswer.approved, .denied])
    func roundTrip(_ status: ChallengeAnswer) throws {
        let key = P256.Signing.PrivateKey()
        let payload = Self.payload(status: status)
        let token = try payload.sign(using: key, keyID: "fac_123")
        #expect(try ChallengeSigningPayload.verify(token, expected: payload, key: key.publicKey) == status)
        #expect(try ChallengeSigningPayload.verifiedPayload(token, key: key.publicKey) == payload)
        let jws = try CompactJWS(parsing: token)
        #expect(jws.header == JWSHeader(alg: "ES256", typ: "verity-challenge+jws", kid: "fac_123"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(jws.payload)) as? [String: String])
        #expect(Set(object.keys) == Set(ChallengeSigningPayload.signedFields))
        #expect(object["status"] == status.rawValue)
    }

    @Test("verifies an answer signed by Python joserfc")
    func pythonToken() throws {
        let key = try P256.Signing.PublicKey(derBase64: CompactJWSTests.pythonPublicKey)
        let token =
            "eyJhbGciOiJFUzI1NiIsInR5cCI6InZlcml0eS1jaGFsbGVuZ2UrandzIiwia2lkIjoiZmFjXzEyMyJ9"
            + ".eyJjaGFsbGVuZ2VJZCI6ImNobF8xIiwiZmFjdG9ySWQiOiJmYWNfMTIzIiwiY29udGVudEhhc2giOiJHakd6TnJ3Y0tIN0FjMU9s"
            + "M0pjSnpUTkI2VzJLc0NzU1dxS0ZuVVptbXRzIiwic3RhdHVzIjoiYXBwcm92ZWQifQ"
            + ".CTOPFrg9rjkoIMyUi8tjpAuOPZAcuTVTbhu-kuzarQiNVtgptLx4fP9Ix2agtesoDIKQrHDErXdDtgixlmPnsA"
        #expect(try ChallengeSigningPayload.verify(token, expected: Self.payload(), key: key) == .approved)
    }

    struct FieldChange: Sendable, CustomTestStringConvertible {
        var field: String
        var change: @Sendable (inout ChallengeSigningPayload) -> Void
        var testDescription: String { field }
    }

    static let fieldChanges: [FieldChange] = [
        .init(field: "challengeId") { $0.challengeId = "chl_2" },
        .init(field: "factorId") { $0.factorId = "fac_124" },
        .init(field: "contentHash") {
            $0.contentHash = ChallengeSigningPayload.contentHash(
                message: "Sign in to Verity?", details: details.reversed())
        },
        .init(field: "status") { $0.status = .denied },
    ]

    @Test("any changed field fails with that field named", arguments: fieldChanges)
    func changedField(_ fieldChange: FieldChange) throws {
        let key = P256.Signing.PrivateKey()
        let signed = Self.payload()
        let token = try signed.sign(using: key, keyID: "fac_123")
        var expected = signed
        fieldChange.change(&expected)
        #expect(expected != signed)
        #expect(throws: ChallengeVerificationError.mismatchedFields([fieldChange.field])) {
            try ChallengeSigningPayload.verify(token, expected: expected, key: key.publicKey)
        }
        // Signing the changed payload instead fails the other way round too.
        let other = try expected.sign(using: key, keyID: "fac_123")
        #expect(throws: ChallengeVerificationError.mismatchedFields([fieldChange.field])) {
            try ChallengeSigningPayload.verify(other, expected: signed, key: key.publicKey)
        }
    }

    @Test("all signed fields are covered by the field checks")
    func signedFieldsCovered() throws {
        #expect(Self.fieldChanges.map(\.field) == ChallengeSigningPayload.signedFields)
        let key = P256.Signing.PrivateKey()
        let token = try Self.payload().sign(using: key, keyID: "fac_123")
        let nothingAlike = ChallengeSigningPayload(challengeId: "a", factorId: "b", contentHash: "c", status: .denied)
        #expect(throws: ChallengeVerificationError.mismatchedFields(ChallengeSigningPayload.signedFields)) {
            try ChallengeSigningPayload.verify(token, expected: nothingAlike, key: key.publicKey)
        }
    }

    @Test("a signature by another key is invalidSignature, not a field mismatch")
    func wrongKey() throws {
        let token = try Self.payload().sign(using: P256.Signing.PrivateKey(), keyID: "fac_123")
        let expected = ChallengeSigningPayload(challengeId: "x", factorId: "y", contentHash: "z", status: .denied)
        #expect(throws: ChallengeVerificationError.invalidSignature) {
            try ChallengeSigningPayload.verify(token, expected: expected, key: P256.Signing.PrivateKey().publicKey)
        }
    }

    @Test("a tampered payload is invalidSignature")
    func tamperedPayload() throws {
        let key = P256.Signing.PrivateKey()
        let token = try Self.payload(status: .denied).sign(using: key, keyID: "fac_123")
        let parts = token.split(separator: ".").map(String.init)
        let approved = try JSONEncoder().encode(Self.payload(status: .approved))
        let forged = [parts[0], Base64URL.encode(approved), parts[2]].joined(separator: ".")
        #expect(throws: ChallengeVerificationError.invalidSignature) {
            try ChallengeSigningPayload.verify(forged, expected: Self.payload(status: .approved), key: key.publicKey)
        }
    }

    @Test("a device token of another type is wrongType")
    func wrongType() throws {
        let key = P256.Signing.PrivateKey()
        let json = try JSONEncoder().encode(Self.payload())
        let asJWT = try CompactJWS.sign(payload: Array(json), keyID: "fac_123", using: key)
        #expect(throws: ChallengeVerificationError.wrongType) {
            try ChallengeSigningPayload.verify(asJWT, expected: Self.payload(), key: key.publicKey)
        }
        let untyped = try CompactJWS.sign(payload: Array(json), keyID: "fac_123", type: nil, using: key)
        #expect(throws: ChallengeVerificationError.wrongType) {
            try ChallengeSigningPayload.verify(untyped, expected: Self.payload(), key: key.publicKey)
        }
    }

    @Test("a validly signed non-answer is invalidPayload")
    func invalidPayload() throws {
        let key = P256.Signing.PrivateKey()
        let bodies = [
            #"{"challengeId":"chl_1","factorId":"fac_123","contentHash":"h"}"#,
            #"{"challengeId":"chl_1","factorId":"fac_123","contentHash":"h","status":"maybe"}"#,
            "[]",
        ]
        for body in bodies {
            let token = try CompactJWS.sign(
                payload: Array(body.utf8), keyID: "fac_123", type: ChallengeSigningPayload.tokenType, using: key)
            #expect(throws: ChallengeVerificationError.invalidPayload) {
                try ChallengeSigningPayload.verify(token, expected: Self.payload(), key: key.publicKey)
            }
        }
    }

    @Test("malformed and non-ES256 tokens are reported as such")
    func malformed() throws {
        let key = P256.Signing.PrivateKey().publicKey
        #expect(throws: ChallengeVerificationError.malformed) {
            try ChallengeSigningPayload.verify("a.b", expected: Self.payload(), key: key)
        }
        let hs256 = [
            Base64URL.encode(#"{"alg":"HS256","typ":"verity-challenge+jws"}"#.utf8), Base64URL.encode("{}".utf8),
            Base64URL.encode([UInt8](repeating: 0, count: 32)),
        ].joined(separator: ".")
        #expect(throws: ChallengeVerificationError.unsupportedAlgorithm) {
            try ChallengeSigningPayload.verify(hs256, expected: Self.payload(), key: key)
        }
    }

    @Test("errors describe themselves")
    func descriptions() {
        let errors: [ChallengeVerificationError] = [
            .malformed, .unsupportedAlgorithm, .wrongType, .invalidSignature, .invalidPayload,
            .mismatchedFields(["status"]),
        ]
        for error in errors {
            #expect(error.description.hasSuffix("."))
        }
        #expect(
            ChallengeVerificationError.mismatchedFields(["factorId", "status"]).description.contains("factorId, status")
        )
    }
}
