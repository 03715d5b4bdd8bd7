import Foundation
import X509

/// An attestation statement's `x5c`: DER certificates, the attesting (leaf) certificate first, as App Attest and
/// WebAuthn's `packed` format carry them. One parser and one chain check for both, with swift-certificates.
struct X5CChain: Sendable {
    /// The leaf first, then the intermediates toward a root.
    let certificates: [Certificate]

    /// Why an `x5c` is not a chain of certificates.
    struct Malformed: Error {}

    /// Parses `x5c` (a CBOR array of byte strings) of `count` certificates.
    init(_ x5c: CBORValue?, count: ClosedRange<Int>) throws(Malformed) {
        guard let array = x5c?.array, count.contains(array.count) else { throw Malformed() }
        var certificates: [Certificate] = []
        for element in array {
            guard let der = element.bytes, let certificate = try? Certificate(derEncoded: [UInt8](der)) else {
                throw Malformed()
            }
            certificates.append(certificate)
        }
        self.certificates = certificates
    }

    /// The attesting certificate.
    var leaf: Certificate { certificates[0] }

    /// Whether the leaf chains through the other certificates to one of `roots`, under RFC 5280's rules at `time`.
    func isTrusted(by roots: [Certificate], at time: Date) async -> Bool {
        guard !roots.isEmpty else { return false }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(validationTime: time) }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore(certificates.dropFirst()))
        guard case .validCertificate = result else { return false }
        return true
    }
}
