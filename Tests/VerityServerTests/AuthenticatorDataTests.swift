import Crypto
import Foundation
import Testing
import _CryptoExtras

@testable import VerityServer

@Suite("COSE keys and authenticator data")
struct AuthenticatorDataTests {
    static func es256Key(_ key: P256.Signing.PublicKey) -> CBORValue {
        let raw = key.rawRepresentation
        return .map([
            CBORValue(1): CBORValue(2), CBORValue(3): CBORValue(-7), CBORValue(-1): CBORValue(1),
            CBORValue(-2): .bytes(raw.prefix(32)), CBORValue(-3): .bytes(raw.suffix(32)),
        ])
    }

    @Test("An ES256 key checks DER signatures made by its private key, and nothing else")
    func es256() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try COSEPublicKey(cbor: CBOREncoder.encode(Self.es256Key(privateKey.publicKey)))
        #expect(key.algorithm == .es256)
        let message = Data("signed".utf8)
        let signature = try privateKey.signature(for: message).derRepresentation
        #expect(key.isValidSignature(signature, for: message))
        #expect(!key.isValidSignature(signature, for: Data("other".utf8)))
        #expect(!key.isValidSignature(Data([0x30, 0x00]), for: message))
    }

    @Test("An Ed25519 key and a 2048-bit RS256 key check their own signatures")
    func edDSAAndRS256() throws {
        let message = Data("signed".utf8)
        let ed = Curve25519.Signing.PrivateKey()
        let edKey = try COSEPublicKey(
            .map([
                CBORValue(1): CBORValue(1), CBORValue(3): CBORValue(-8), CBORValue(-1): CBORValue(6),
                CBORValue(-2): .bytes(ed.publicKey.rawRepresentation),
            ]))
        #expect(edKey.isValidSignature(try ed.signature(for: message), for: message))
        #expect(!edKey.isValidSignature(try ed.signature(for: message), for: Data("x".utf8)))

        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let components = try rsa.publicKey.getKeyPrimitives()
        let rsaKey = try COSEPublicKey(
            .map([
                CBORValue(1): CBORValue(3), CBORValue(3): CBORValue(-257),
                CBORValue(-1): .bytes(components.modulus), CBORValue(-2): .bytes(components.publicExponent),
            ]))
        let signature = try rsa.signature(for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5)
        #expect(rsaKey.isValidSignature(signature.rawRepresentation, for: message))
        #expect(!rsaKey.isValidSignature(signature.rawRepresentation, for: Data("x".utf8)))
    }

    @Test("Unknown algorithms, wrong curves, missing coordinates and points off the curve are refused")
    func badKeys() throws {
        let good = Self.es256Key(P256.Signing.PrivateKey().publicKey)
        var entries = try #require(good.map)
        entries[CBORValue(3)] = CBORValue(-35)
        #expect(throws: COSEKeyError.unsupportedAlgorithm) { try COSEPublicKey(.map(entries)) }
        entries = try #require(good.map)
        entries[CBORValue(-1)] = CBORValue(2)
        #expect(throws: COSEKeyError.unsupportedAlgorithm) { try COSEPublicKey(.map(entries)) }
        entries = try #require(good.map)
        entries[CBORValue(-3)] = nil
        #expect(throws: COSEKeyError.missingParameter(label: -3)) { try COSEPublicKey(.map(entries)) }
        entries = try #require(good.map)
        entries[CBORValue(-3)] = .bytes(Data(repeating: 1, count: 32))
        #expect(throws: COSEKeyError.invalidKey) { try COSEPublicKey(.map(entries)) }
        #expect(throws: COSEKeyError.missingParameter(label: 1)) { try COSEPublicKey(.array([])) }
        #expect(throws: COSEKeyError.malformed(.truncated)) { try COSEPublicKey(cbor: Data([0xA5])) }
    }

    static func attestedAuthenticatorData(
        credentialID: Data, key: CBORValue, flags: UInt8 = 0x45, counter: UInt32 = 7
    ) -> Data {
        var data = Data(SHA256.hash(data: Data("example.com".utf8)))
        data.append(flags)
        data += withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        data += Data(repeating: 0xAA, count: 16)
        data += Data([UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)]) + credentialID
        data += CBOREncoder.encode(key)
        return data
    }

    @Test("Authenticator data with attested credential data yields hash, flags, counter, AAGUID, id and key")
    func attested() throws {
        let privateKey = P256.Signing.PrivateKey()
        let keyCBOR = CBOREncoder.encode(Self.es256Key(privateKey.publicKey))
        let id = Data((0..<20).map { UInt8($0) })
        let raw = Self.attestedAuthenticatorData(credentialID: id, key: Self.es256Key(privateKey.publicKey))
        let parsed = try AuthenticatorData(raw)
        #expect(parsed.rpIDHash == Data(SHA256.hash(data: Data("example.com".utf8))))
        #expect(parsed.flags == [.userPresent, .userVerified, .attestedCredentialData])
        #expect(parsed.signCount == 7)
        let credential = try #require(parsed.attestedCredential)
        #expect(credential.aaguid == Data(repeating: 0xAA, count: 16))
        #expect(credential.credentialID == id)
        #expect(credential.publicKeyCBOR == keyCBOR)
        #expect(credential.publicKey.algorithm == .es256)
        #expect(parsed.raw == raw)

        let withExtensions = Self.attestedAuthenticatorData(
            credentialID: id, key: Self.es256Key(privateKey.publicKey), flags: 0xC5)
        let extended = try AuthenticatorData(withExtensions + CBOREncoder.encode(.map([.text("credProps"): .null])))
        #expect(extended.extensions?["credProps"] == .null)
        #expect(extended.flags.contains(.extensionData))
    }

    @Test("Short data, announced parts that are missing, long credential ids and trailing bytes are refused")
    func refused() throws {
        let key = Self.es256Key(P256.Signing.PrivateKey().publicKey)
        let raw = Self.attestedAuthenticatorData(credentialID: Data([1, 2, 3]), key: key)
        #expect(throws: AuthenticatorDataError.truncated) { try AuthenticatorData(raw.prefix(36)) }
        #expect(throws: AuthenticatorDataError.truncated) { try AuthenticatorData(raw.prefix(50)) }
        #expect(throws: AuthenticatorDataError.trailingBytes) { try AuthenticatorData(raw + Data([0])) }
        #expect(throws: AuthenticatorDataError.trailingBytes) {
            try AuthenticatorData(raw.prefix(32) + Data([0x01, 0, 0, 0, 0, 0]))
        }
        #expect(throws: AuthenticatorDataError.invalidPublicKey(.malformed(.truncated))) {
            try AuthenticatorData(raw.dropLast())
        }
        let long = Self.attestedAuthenticatorData(credentialID: Data(count: 1024), key: key)
        #expect(throws: AuthenticatorDataError.credentialIDTooLong) { try AuthenticatorData(long) }
        #expect(throws: AuthenticatorDataError.malformedCBOR(.truncated)) {
            try AuthenticatorData(raw.prefix(32) + Data([0x81, 0, 0, 0, 0]))
        }
        let assertion = try AuthenticatorData(raw.prefix(32) + Data([0x1D, 0, 0, 0, 0]))
        #expect(assertion.attestedCredential == nil)
        #expect(assertion.flags == [.userPresent, .userVerified, .backupEligible, .backedUp])
        #expect(assertion.signCount == 0)
    }

    @Test("An attestation object yields its format, statement and authenticator data; a broken one is refused")
    func attestationObject() throws {
        let key = Self.es256Key(P256.Signing.PrivateKey().publicKey)
        let authData = Self.attestedAuthenticatorData(credentialID: Data([9]), key: key)
        let object = CBOREncoder.encode(
            .map([.text("fmt"): .text("none"), .text("attStmt"): .map([:]), .text("authData"): .bytes(authData)]))
        let parsed = try AttestationObject(object)
        #expect(parsed.format == "none")
        #expect(parsed.statement == .map([:]))
        #expect(parsed.authenticatorData.attestedCredential?.credentialID == Data([9]))
        let missing = CBOREncoder.encode(.map([.text("fmt"): .text("none"), .text("authData"): .bytes(authData)]))
        #expect(throws: AuthenticatorDataError.malformedAttestationObject) { try AttestationObject(missing) }
        #expect(throws: AuthenticatorDataError.malformedCBOR(.trailingBytes)) { try AttestationObject(object + [0]) }
    }
}
