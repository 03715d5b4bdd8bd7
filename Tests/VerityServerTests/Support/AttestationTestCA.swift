import Crypto
import Foundation
import SwiftASN1
import X509

@testable import VerityServer

/// A test authenticator vendor's certificate authority, in place of a root from the FIDO Metadata Service: it issues
/// `packed` attestation certificates as WebAuthn §8.2.1 asks for them, and bent ones a real vendor would not issue.
struct AttestationTestCA: Sendable {
    let rootKey = P256.Signing.PrivateKey()
    let root: Certificate

    init(now: Date, name: String = "Test Authenticator Attestation Root") throws {
        let rootName = try DistinguishedName { CommonName(name) }
        root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(rootKey.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
    }

    /// The root as PEM, as a project's attestation roots hold it.
    var rootPEM: String {
        get throws { try root.serializeAsPEM().pemString }
    }

    /// An attestation certificate and its key: for the model `aaguid` (no AAGUID extension when nil), in the subject
    /// OU `unit`, and a CA when `authority`.
    func attestation(
        aaguid: Data?, unit: String = PasskeyRelyingParty.attestationUnit, authority: Bool = false
    ) throws -> SoftwareAuthenticator.AttestationCertificate {
        let key = P256.Signing.PrivateKey()
        var extensions = try Certificate.Extensions {
            Critical(authority ? BasicConstraints.isCertificateAuthority(maxPathLength: nil) : .notCertificateAuthority)
        }
        if let aaguid {
            var serializer = DER.Serializer()
            try serializer.serialize(ASN1OctetString(contentBytes: ArraySlice(aaguid)))
            try extensions.append(
                Certificate.Extension(
                    oid: PasskeyRelyingParty.aaguidExtension, critical: false, value: serializer.serializedBytes[...]))
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: root.notValidBefore, notValidAfter: root.notValidAfter, issuer: root.subject,
            subject: try DistinguishedName {
                CountryName("US")
                OrganizationName("Test Authenticators")
                OrganizationalUnitName(unit)
                CommonName("Test Authenticator 1")
            },
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        return SoftwareAuthenticator.AttestationCertificate(key: key, chain: [Data(serializer.serializedBytes)])
    }
}
