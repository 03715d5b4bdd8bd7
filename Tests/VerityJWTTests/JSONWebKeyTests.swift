import Crypto
import Foundation
import Testing
import VerityCore

@Suite("JSON Web Keys")
struct JSONWebKeyTests {
    @Test("A P-256 key survives the round trip through a JWK and its JSON")
    func roundTrip() throws {
        let publicKey = P256.Signing.PrivateKey().publicKey
        let jwk = JSONWebKey(publicKey: publicKey, keyID: "k1")

        let json = try JSONEncoder().encode(JSONWebKeySet(keys: [jwk]))
        let decoded = try JSONDecoder().decode(JSONWebKeySet.self, from: json)
        let restored = try #require(decoded.key(withID: "k1")).p256SigningKey()

        #expect(restored.x963Representation == publicKey.x963Representation)
        #expect(decoded.key(withID: "k2") == nil)
        #expect(jwk.kty == "EC")
        #expect(jwk.crv == "P-256")
        #expect(jwk.alg == "ES256")
        #expect(jwk.use == "sig")
        #expect(jwk.x.flatMap(Base64URL.decode)?.count == 32)
        #expect(jwk.y.flatMap(Base64URL.decode)?.count == 32)
    }

    @Test("A JWK written by another implementation decodes to the same key")
    func interoperable() throws {
        // The P-256 public key of RFC 7515 appendix A.3.
        let json = #"""
            {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"rfc","foo":"ignored"}
            """#
        let jwk = try JSONDecoder().decode(JSONWebKey.self, from: Data(json.utf8))
        let key = try jwk.p256SigningKey()

        #expect(JSONWebKey(publicKey: key, keyID: "rfc").x == jwk.x)
        #expect(JSONWebKey(publicKey: key, keyID: "rfc").y == jwk.y)
        #expect(jwk.alg == nil)
    }

    @Test("Unusable JWKs are refused with a precise error")
    func refusals() throws {
        let valid = JSONWebKey(publicKey: P256.Signing.PrivateKey().publicKey, keyID: "k1")
        let zero = Base64URL.encode([UInt8](repeating: 0, count: 32))
        var cases: [(JSONWebKey, JSONWebKeyError)] = []

        var key = valid
        key.kty = "RSA"
        cases.append((key, .unsupportedKeyType("RSA")))
        key = valid
        key.crv = "P-384"
        cases.append((key, .unsupportedCurve("P-384")))
        key = valid
        key.crv = nil
        cases.append((key, .unsupportedCurve(nil)))
        key = valid
        key.alg = "RS256"
        cases.append((key, .unsupportedAlgorithm("RS256")))
        key = valid
        key.use = "enc"
        cases.append((key, .unsupportedUse("enc")))
        key = valid
        key.y = nil
        cases.append((key, .missingCoordinate("y")))
        key = valid
        key.x = Base64URL.encode([UInt8](repeating: 1, count: 31))
        cases.append((key, .invalidCoordinate("x")))
        key = valid
        key.x = "not base64url!"
        cases.append((key, .invalidCoordinate("x")))
        key = valid
        key.x = zero
        key.y = zero
        cases.append((key, .invalidPoint))

        for (jwk, expected) in cases {
            #expect(throws: expected) {
                try jwk.p256SigningKey()
            }
        }
    }

    @Test("Members that are nil are omitted from the JSON")
    func encoding() throws {
        let jwk = JSONWebKey(kty: "EC", crv: "P-256", x: "AA", y: "BB")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys

        let json = String(decoding: try encoder.encode(jwk), as: UTF8.self)

        #expect(json == #"{"crv":"P-256","kty":"EC","x":"AA","y":"BB"}"#)
    }
}
