import Crypto
import Foundation
import VerityCore

@testable import VerityServer

/// A WebAuthn authenticator and client in software, written from the spec (Level 3 §6.1, §6.5, §5.8.1), for tests:
/// it makes attestation objects (`none`, `packed` self attestation, or `packed` with an `x5c` chain) and assertions
/// with P-256 keys. Its switches
/// make the answers a real authenticator or a hostile client could send: no UV, BE/BS, any counter, another origin
/// or relying-party id.
struct SoftwareAuthenticator {
    /// The attestation statement format a registration answer carries.
    enum AttestationFormat {
        case none, packed
        /// `packed` signed by an attestation certificate's key, its chain in `x5c` (§8.2).
        case packedX5C(AttestationCertificate)
    }

    /// An attestation key and its certificate chain (DER, the attesting certificate first).
    struct AttestationCertificate: Sendable {
        var key: P256.Signing.PrivateKey
        var chain: [Data]
    }

    /// One registration answer.
    struct Registration {
        var credentialID: Data
        var clientDataJSON: Data
        var attestationObject: Data
        var answer: PasskeyRegistrationAnswer {
            PasskeyRegistrationAnswer(
                credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                transports: ["internal"])
        }
        /// The standard JSON serialisation of the `PublicKeyCredential` (`toJSON()`).
        var json: [String: Any] {
            [
                "id": Base64URL.encode(credentialID), "rawId": Base64URL.encode(credentialID), "type": "public-key",
                "response": [
                    "clientDataJSON": Base64URL.encode(clientDataJSON),
                    "attestationObject": Base64URL.encode(attestationObject), "transports": ["internal"],
                ],
            ]
        }
    }

    /// One assertion answer.
    struct Assertion {
        var credentialID: Data
        var clientDataJSON: Data
        var authenticatorData: Data
        var signature: Data
        var userHandle: Data?
        var answer: PasskeyAssertionAnswer {
            PasskeyAssertionAnswer(
                credentialID: credentialID, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData,
                signature: signature, userHandle: userHandle)
        }
        /// The standard JSON serialisation of the `PublicKeyCredential` (`toJSON()`).
        var json: [String: Any] {
            var response = [
                "clientDataJSON": Base64URL.encode(clientDataJSON),
                "authenticatorData": Base64URL.encode(authenticatorData), "signature": Base64URL.encode(signature),
            ]
            response["userHandle"] = userHandle.map(Base64URL.encode)
            return [
                "id": Base64URL.encode(credentialID), "rawId": Base64URL.encode(credentialID), "type": "public-key",
                "response": response,
            ]
        }
    }

    /// An assertion was asked for with a credential this authenticator does not hold.
    struct UnknownCredential: Error {}

    private struct Credential {
        var key: P256.Signing.PrivateKey
        var userHandle: Data
    }

    /// The relying-party id the authenticator scopes credentials to (its hash goes into authenticator data).
    var rpID: String
    /// The origin the client reports in client data.
    var origin: String
    /// Whether the user is verified (UV).
    var userVerified = true
    /// Whether the user is present (UP); false only for hostile answers.
    var userPresent = true
    /// BE and BS.
    var backupEligible = false
    var backedUp = false
    /// The next signature counter; it rises by one per signature when ``counting`` is on, and stays zero when off.
    var counter: UInt32 = 0
    var counting = true
    /// The authenticator model's AAGUID in attested credential data (all zero, as `none` attestation sends it).
    var aaguid = Data(repeating: 0, count: 16)
    /// The client data `type` override, for wrong-ceremony answers.
    var clientDataType: String? = nil
    private var credentials: [Data: Credential] = [:]
    /// The ids of the credentials it made, oldest first.
    private(set) var credentialIDs: [Data] = []

    init(rpID: String = "example.com", origin: String = "https://example.com") {
        self.rpID = rpID
        self.origin = origin
    }

    /// Makes a credential for `userHandle` and answers the creation `challenge` (§6.3.2, §7.1 from the client side).
    mutating func register(challenge: [UInt8], userHandle: Data, attestation: AttestationFormat = .none)
        -> Registration
    {
        let key = P256.Signing.PrivateKey()
        let credentialID = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        credentials[credentialID] = Credential(key: key, userHandle: userHandle)
        credentialIDs.append(credentialID)
        let raw = key.publicKey.rawRepresentation
        let coseKey: CBORValue = .map([
            CBORValue(1): CBORValue(2), CBORValue(3): CBORValue(-7), CBORValue(-1): CBORValue(1),
            CBORValue(-2): .bytes(raw.prefix(32)), CBORValue(-3): .bytes(raw.suffix(32)),
        ])
        var attestedData = aaguid
        attestedData += Data([UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)]) + credentialID
        attestedData += CBOREncoder.encode(coseKey)
        let authenticatorData = self.authenticatorData(attested: true) + attestedData
        let clientDataJSON = clientData(type: "webauthn.create", challenge: challenge)
        var statement: [CBORValue: CBORValue] = [:]
        let signed = authenticatorData + SHA256.hash(data: clientDataJSON)
        switch attestation {
        case .none: break
        case .packed:
            let signature = (try? key.signature(for: signed).derRepresentation) ?? Data()
            statement = [.text("alg"): CBORValue(-7), .text("sig"): .bytes(signature)]
        case .packedX5C(let certificate):
            let signature = (try? certificate.key.signature(for: signed).derRepresentation) ?? Data()
            statement = [
                .text("alg"): CBORValue(-7), .text("sig"): .bytes(signature),
                .text("x5c"): .array(certificate.chain.map(CBORValue.bytes)),
            ]
        }
        let format = if case .none = attestation { "none" } else { "packed" }
        let object = CBOREncoder.encode(
            .map([
                .text("fmt"): .text(format), .text("attStmt"): .map(statement),
                .text("authData"): .bytes(authenticatorData),
            ]))
        return Registration(credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: object)
    }

    /// Signs an assertion for `challenge` with the credential `credentialID` (§6.3.3).
    mutating func assert(challenge: [UInt8], credentialID: Data) throws -> Assertion {
        guard let credential = credentials[credentialID] else { throw UnknownCredential() }
        let authenticatorData = self.authenticatorData(attested: false)
        let clientDataJSON = clientData(type: "webauthn.get", challenge: challenge)
        let signed = authenticatorData + SHA256.hash(data: clientDataJSON)
        let signature = try credential.key.signature(for: signed).derRepresentation
        return Assertion(
            credentialID: credentialID, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData,
            signature: signature, userHandle: credential.userHandle)
    }

    /// rpIdHash, flags and counter; AT when `attested`.
    private mutating func authenticatorData(attested: Bool) -> Data {
        var flags: UInt8 = 0
        if userPresent { flags |= 0x01 }
        if userVerified { flags |= 0x04 }
        if backupEligible { flags |= 0x08 }
        if backedUp { flags |= 0x10 }
        if attested { flags |= 0x40 }
        if counting { counter += 1 }
        var data = Data(SHA256.hash(data: Data(rpID.utf8)))
        data.append(flags)
        data += withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        return data
    }

    /// The client data JSON a browser would send (§5.8.1.1 limited verification form, keys in the spec's order).
    private func clientData(type: String, challenge: [UInt8]) -> Data {
        let type = clientDataType ?? type
        let challenge = Base64URL.encode(challenge)
        return Data(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }
}
