import Crypto
import Foundation
import SwiftASN1
import X509

@testable import VerityServer

/// A stand-in for Apple's App Attest service: a test root CA and intermediate (in place of Apple's App Attestation Root
/// CA, which production pins), and one device key that it attests and that makes assertions, byte for byte in Apple's
/// formats. Its fields can be bent to make the attestations Apple would never issue.
struct AppAttestTestDevice: Sendable {
    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let key = P256.Signing.PrivateKey()

    init(now: Date) throws {
        let rootName = try DistinguishedName { CommonName("Test App Attestation Root CA") }
        let intermediateName = try DistinguishedName { CommonName("Test App Attestation CA 1") }
        let authority = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
            Critical(KeyUsage(keyCertSign: true))
        }
        root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(rootKey.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256, extensions: authority,
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(intermediateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256, extensions: authority,
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
    }

    /// The key id `DCAppAttestService` would name the key by: the base64 SHA-256 of its uncompressed point.
    var keyId: String { Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString() }

    /// An attestation object for `challenge` by the app `appId`; each argument after `environment` bends one field.
    func attestation(
        challenge: String, appId: String, environment: AppAttestEnvironment, nonceChallenge: String? = nil,
        counter: UInt32 = 0, issuer: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        let keyIdBytes = Data(SHA256.hash(data: key.publicKey.x963Representation))
        let point = key.publicKey.x963Representation
        let coseKey = CBOREncoder.encode(
            .map([
                CBORValue(1): CBORValue(2), CBORValue(3): CBORValue(-7), CBORValue(-1): CBORValue(1),
                CBORValue(-2): .bytes(point[1..<33]), CBORValue(-3): .bytes(point[33..<65]),
            ]))
        var authData = Data(SHA256.hash(data: Data(appId.utf8)))
        authData.append(0x40)
        authData.append(contentsOf: Self.bigEndian(counter))
        authData.append(contentsOf: environment.aaguid)
        authData.append(contentsOf: [0, 32])
        authData.append(keyIdBytes)
        authData.append(coseKey)
        let nonce = Data(
            SHA256.hash(data: authData + Data(SHA256.hash(data: Data((nonceChallenge ?? challenge).utf8)))))
        let credential = try credentialCertificate(nonce: nonce, issuer: issuer ?? intermediateKey)
        let object = CBOREncoder.encode(
            .map([
                .text("fmt"): .text("apple-appattest"),
                .text("attStmt"): .map([
                    .text("x5c"): .array([.bytes(try Self.der(credential)), .bytes(try Self.der(intermediate))]),
                    .text("receipt"): .bytes(Data("receipt".utf8)),
                ]),
                .text("authData"): .bytes(authData),
            ]))
        return object.base64EncodedString()
    }

    /// An assertion over `clientData` with `counter`, as `generateAssertion` makes it (the AT flag set, as Apple's
    /// assertions have it, with no credential data).
    func assertion(clientData: Data, appId: String, counter: UInt32, signer: P256.Signing.PrivateKey? = nil) throws
        -> Data
    {
        var authData = Data(SHA256.hash(data: Data(appId.utf8)))
        authData.append(0x40)
        authData.append(contentsOf: Self.bigEndian(counter))
        let nonce = Data(SHA256.hash(data: authData + Data(SHA256.hash(data: clientData))))
        let signature = try (signer ?? key).signature(for: nonce)
        return CBOREncoder.encode(
            .map([
                .text("signature"): .bytes(signature.derRepresentation), .text("authenticatorData"): .bytes(authData),
            ])
        )
    }

    private func credentialCertificate(nonce: Data, issuer: P256.Signing.PrivateKey) throws -> Certificate {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific))
            {
                try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(nonce)))
            }
        }
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
            Certificate.Extension(
                oid: AppAttestVerifier.nonceExtension, critical: false, value: serializer.serializedBytes[...])
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: intermediate.notValidBefore, notValidAfter: intermediate.notValidAfter,
            issuer: intermediate.subject, subject: try DistinguishedName { CommonName("test app attest key") },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuer))
    }

    private static func der(_ certificate: Certificate) throws -> Data {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
