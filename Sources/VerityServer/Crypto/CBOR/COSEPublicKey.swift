import Crypto
import Foundation
import _CryptoExtras

/// A credential public key read from a COSE_Key: ES256 (P-256), EdDSA (Ed25519) or RS256 (RSA PKCS #1 v1.5 with
/// SHA-256, 2048 bits or more), the algorithms WebAuthn relying parties are asked to support.
struct COSEPublicKey: Sendable {
    /// The COSE algorithm identifiers this type accepts.
    enum Algorithm: Int, Sendable, Hashable, CaseIterable {
        /// ECDSA with P-256 and SHA-256.
        case es256 = -7
        /// EdDSA; only Ed25519 is accepted.
        case edDSA = -8
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256 = -257
    }

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    // COSE labels (RFC 9052 §7.1, RFC 9053 §7).
    private static let keyTypeLabel = 1
    private static let algorithmLabel = 3
    private static let curveLabel = -1
    private static let xLabel = -2
    private static let yLabel = -3
    private static let rsaModulusLabel = -1
    private static let rsaExponentLabel = -2

    /// The algorithm the key is for; a signature is checked with this algorithm only.
    let algorithm: Algorithm
    private let key: Key

    /// Reads the COSE_Key in `encoded`, which must hold exactly that one CBOR map.
    init(cbor encoded: some DataProtocol, decoder: CBORDecoder = CBORDecoder()) throws(COSEKeyError) {
        let value: CBORValue
        do { value = try decoder.decode(encoded) } catch { throw .malformed(error) }
        try self.init(value)
    }

    /// Reads a decoded COSE_Key.
    init(_ value: CBORValue) throws(COSEKeyError) {
        guard value.map != nil else { throw .missingParameter(label: Self.keyTypeLabel) }
        guard let keyType = value[Self.keyTypeLabel]?.int else { throw .missingParameter(label: Self.keyTypeLabel) }
        guard let number = value[Self.algorithmLabel]?.int else { throw .missingParameter(label: Self.algorithmLabel) }
        guard let algorithm = Algorithm(rawValue: number) else { throw .unsupportedAlgorithm }
        self.algorithm = algorithm
        switch (algorithm, keyType) {
        case (.es256, 2):
            // EC2 key type, curve P-256 (1), uncompressed coordinates of 32 bytes each.
            guard value[Self.curveLabel]?.int == 1 else { throw .unsupportedAlgorithm }
            let x = try Self.bytes(value, Self.xLabel)
            let y = try Self.bytes(value, Self.yLabel)
            guard x.count == 32, y.count == 32 else { throw .invalidKey }
            do { key = .p256(try P256.Signing.PublicKey(rawRepresentation: x + y)) } catch { throw .invalidKey }
        case (.edDSA, 1):
            // OKP key type, curve Ed25519 (6).
            guard value[Self.curveLabel]?.int == 6 else { throw .unsupportedAlgorithm }
            let x = try Self.bytes(value, Self.xLabel)
            do { key = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x)) } catch { throw .invalidKey }
        case (.rs256, 3):
            let modulus = try Self.bytes(value, Self.rsaModulusLabel)
            let exponent = try Self.bytes(value, Self.rsaExponentLabel)
            // swift-crypto refuses moduli under 2048 bits.
            do { key = .rsa(try _RSA.Signing.PublicKey(n: modulus, e: exponent)) } catch { throw .invalidKey }
        default:
            throw .unsupportedAlgorithm
        }
    }

    /// Whether `signature` is this key's signature over `data`, in the form WebAuthn uses for the algorithm: DER for
    /// ECDSA, raw for EdDSA, PKCS #1 v1.5 for RSA.
    func isValidSignature(_ signature: some DataProtocol, for data: some DataProtocol) -> Bool {
        switch key {
        case .p256(let key):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: SHA256.hash(data: data))
        case .ed25519(let key):
            return key.isValidSignature(Data(signature), for: Data(data))
        case .rsa(let key):
            let signature = _RSA.Signing.RSASignature(rawRepresentation: Data(signature))
            return key.isValidSignature(signature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        }
    }

    private static func bytes(_ value: CBORValue, _ label: Int) throws(COSEKeyError) -> Data {
        guard let bytes = value[label]?.bytes else { throw .missingParameter(label: label) }
        return bytes
    }
}
