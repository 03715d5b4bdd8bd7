import Crypto
import Foundation
import SwiftASN1
import X509

/// Checks App Attest attestations and assertions as Apple's "Validating apps that connect to your server" lays them
/// out. It holds no state: ``AppAttestService`` issues the challenges, keeps the keys and their counters.
struct AppAttestVerifier: Sendable {
    /// Why an attestation or an assertion is refused; the description is what the client is told.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case untrustedChain
        case wrongNonce
        case wrongKeyId
        case wrongApp
        case wrongCounter
        case wrongEnvironment
        case badSignature

        var description: String {
            switch self {
            case .malformed(let what): "The App Attest object is malformed: \(what)."
            case .untrustedChain: "The attestation's certificates do not chain to Apple's App Attestation Root CA."
            case .wrongNonce: "The attestation is not for this challenge."
            case .wrongKeyId: "The attestation is not for this key id."
            case .wrongApp: "The App Attest key belongs to another app."
            case .wrongCounter: "The App Attest counter did not grow."
            case .wrongEnvironment: "The App Attest key is of another environment than the project accepts."
            case .badSignature: "The App Attest assertion's signature is not valid."
            }
        }
    }

    /// The extension of the credential certificate that holds the nonce.
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]
    /// The attestation statement format App Attest uses.
    static let format = "apple-appattest"

    /// The trust anchors: Apple's App Attestation Root CA in production, a test root in tests.
    let roots: [Certificate]
    private let decoder = CBORDecoder(maximumSize: 16 * 1024, maximumDepth: 4)

    init(roots: [Certificate]) {
        self.roots = roots
    }

    /// Verifies an attestation of the key `keyId` (the base64 SHA-256 of the key, as `DCAppAttestService` names it)
    /// made for `challenge`, by the app `appId` (`TEAMID.bundle.id`) in `environment`, and answers the key.
    func attestation(
        _ object: Data, keyId: Data, challenge: Data, appId: String, environment: AppAttestEnvironment, now: Date
    ) async throws(Failure) -> P256.Signing.PublicKey {
        let attestation: AttestationObject
        do { attestation = try AttestationObject(object, decoder: decoder) } catch {
            throw .malformed("not an attestation object")
        }
        guard attestation.format == Self.format else { throw .malformed("its format is not \(Self.format)") }
        guard let count = attestation.statement["x5c"]?.array?.count, (2...4).contains(count) else {
            throw .malformed("x5c has no certificate chain")
        }
        let chain: X5CChain
        do { chain = try X5CChain(attestation.statement["x5c"], count: 2...4) } catch {
            throw .malformed("x5c holds a non-certificate")
        }
        // 1. The credential certificate chains to the pinned root.
        guard await chain.isTrusted(by: roots, at: now) else { throw .untrustedChain }
        let credential = chain.leaf
        // 2-4. Its nonce extension is SHA-256(authData ‖ SHA-256(challenge)).
        let authData = attestation.authenticatorData
        let nonce = Data(SHA256.hash(data: authData.raw + Data(SHA256.hash(data: challenge))))
        guard let stated = try? Self.nonce(in: credential), stated == nonce else { throw .wrongNonce }
        // 5. The key id is the SHA-256 of the certificate's key, the uncompressed P-256 point.
        guard let key = P256.Signing.PublicKey(credential.publicKey) else {
            throw .malformed("the credential certificate's key is not P-256")
        }
        guard Data(SHA256.hash(data: key.x963Representation)) == keyId else { throw .wrongKeyId }
        // 6. The key is the app's.
        guard authData.rpIDHash == Self.appIdHash(appId) else { throw .wrongApp }
        // 7. A fresh key has signed nothing yet.
        guard authData.signCount == 0 else { throw .wrongCounter }
        // 8-9. The environment the project accepts, and the credential id is the key id.
        guard let credentialData = authData.attestedCredential else { throw .malformed("no attested credential") }
        guard [UInt8](credentialData.aaguid) == environment.aaguid else { throw .wrongEnvironment }
        guard credentialData.credentialID == keyId else { throw .wrongKeyId }
        return key
    }

    /// Verifies an assertion `{signature, authenticatorData}` over `clientData` by `key` of the app `appId`, and
    /// answers its counter; the caller stores it only if it is greater than the last one.
    func assertion(_ object: Data, clientData: Data, key: P256.Signing.PublicKey, appId: String) throws(Failure)
        -> UInt32
    {
        let value: CBORValue
        do { value = try decoder.decode(object) } catch { throw .malformed("not CBOR") }
        guard let signatureBytes = value["signature"]?.bytes, let authBytes = value["authenticatorData"]?.bytes,
            value.map?.count == 2
        else { throw .malformed("an assertion is {signature, authenticatorData}") }
        // Only the fixed part is read: Apple's assertions set the AT flag with no attested credential data (and newer
        // ones append an extension map), which WebAuthn's parser rightly refuses. The signature covers every byte.
        let authData = [UInt8](authBytes)
        guard authData.count >= AuthenticatorData.fixedLength, authData.count <= 1024 else {
            throw .malformed("its authenticator data is not 37 bytes and more")
        }
        let rpIdHash = Data(authData[0..<32])
        let counter = authData[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        // 1-3. The signature is over nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)).
        let nonce = Data(SHA256.hash(data: authBytes + Data(SHA256.hash(data: clientData))))
        guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes),
            key.isValidSignature(signature, for: nonce)
        else { throw .badSignature }
        // 4. The key is the app's.
        guard rpIdHash == Self.appIdHash(appId) else { throw .wrongApp }
        // 5. The caller keeps the counter only if it is above the stored one (0 after the attestation).
        return counter
    }

    static func appIdHash(_ appId: String) -> Data {
        Data(SHA256.hash(data: Data(appId.utf8)))
    }

    /// The octet string of the nonce extension: `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    private static func nonce(in certificate: Certificate) throws -> Data? {
        guard let found = certificate.extensions[oid: nonceExtension] else { return nil }
        let root = try DER.parse(found.value)
        guard root.identifier == .sequence, case .constructed(let children) = root.content else { return nil }
        var elements = children.makeIterator()
        guard let tagged = elements.next(), elements.next() == nil,
            tagged.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific),
            case .constructed(let inner) = tagged.content
        else { return nil }
        var octets = inner.makeIterator()
        guard let node = octets.next(), octets.next() == nil else { return nil }
        return Data(try ASN1OctetString(derEncoded: node).bytes)
    }
}
