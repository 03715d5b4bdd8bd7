import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throwaway certificate for `127.0.0.1` and `localhost`, signed by its own fresh P-256 key, for the TLS tests'
/// servers.
///
/// Made in memory with swift-certificates, so the tests need no `openssl` on the machine and leave no key files
/// behind. It names the loopback address the tests connect to, so a client that verifies certificates refuses it
/// only because nothing trusts its issuer.
struct SelfSignedCertificate: Sendable {
    /// The certificate, ready for a NIOSSL server configuration.
    var certificate: NIOSSLCertificate
    /// Its private key.
    var privateKey: NIOSSLPrivateKey

    /// Makes a certificate valid from an hour before `now` (leeway for clock skew) to two days after.
    /// - Parameter trustAnchor: Whether a client may trust the certificate as its own root (a CA certificate, as
    ///   `openssl req -x509` makes); BoringSSL refuses a leaf certificate as a trust root.
    static func make(now: Date = Date(), trustAnchor: Bool = false) throws -> SelfSignedCertificate {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let extensions = try Certificate.Extensions {
            if trustAnchor {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            } else {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
            }
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([
                .dnsName("localhost"),
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            ])
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(2 * 24 * 3600),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return SelfSignedCertificate(
            certificate: try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            // PEM (PKCS #8) rather than DER, because NIOSSL's PEM reader takes any private key format.
            privateKey: try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
        )
    }
}
