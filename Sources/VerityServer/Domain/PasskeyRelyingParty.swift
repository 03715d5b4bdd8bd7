import Crypto
import Foundation
import SwiftASN1
import VerityCore
import X509

/// The WebAuthn relying party's checks (Level 3 §7.1 and §7.2) for one project's ``PasskeySettings``: pure
/// functions of the answer, the challenge the ceremony issued and, for an assertion, the stored credential. Issuing
/// challenges, spending them once and storing credentials is the passkey service's; the faces only translate.
struct PasskeyRelyingParty: Sendable {
    let settings: PasskeySettings
    var decoder = CBORDecoder()

    /// The parts of `clientDataJSON` the checks read (§5.8.1).
    private struct ClientData: Decodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool?
    }

    /// The options of a registration for the user `userHandle`, who already holds `existing`.
    func creationOptions(
        challenge: [UInt8], userHandle: Data, userName: String, userDisplayName: String,
        existing: [PasskeyCredentialDescriptor]
    ) -> PasskeyCreationOptions {
        PasskeyCreationOptions(
            challenge: challenge, rpID: settings.rpID, rpName: settings.rpName, userHandle: userHandle,
            userName: userName, userDisplayName: userDisplayName, algorithms: [.es256, .edDSA, .rs256],
            timeout: settings.challengeLifetime, excludeCredentials: existing, attachment: settings.attachment,
            residentKey: settings.residentKey, userVerification: settings.userVerification,
            attestation: settings.attestation)
    }

    /// The options of a sign-in or step-up: `allowed` names the user's credentials, or is empty for a discoverable
    /// sign-in.
    func requestOptions(challenge: [UInt8], allowed: [PasskeyCredentialDescriptor]) -> PasskeyRequestOptions {
        PasskeyRequestOptions(
            challenge: challenge, rpID: settings.rpID, timeout: settings.challengeLifetime, allowCredentials: allowed,
            userVerification: settings.userVerification)
    }

    /// Checks a registration answer against the challenge its ceremony issued (§7.1 steps 5 to 27).
    ///
    /// - Parameter now: When an attestation certificate chain must be valid (the service passes its clock's time).
    func verifyRegistration(_ answer: PasskeyRegistrationAnswer, challenge: [UInt8], now: Date = Date())
        async throws(PasskeyRefusal) -> RegisteredPasskey
    {
        try checkClientData(answer.clientDataJSON, type: "webauthn.create", challenge: challenge)
        let object: AttestationObject
        do { object = try AttestationObject(answer.attestationObject, decoder: decoder) } catch {
            throw Self.refusal(error)
        }
        let authenticatorData = object.authenticatorData
        try checkFlags(authenticatorData)
        guard let attested = authenticatorData.attestedCredential else {
            throw .malformed("the authenticator data has no attested credential")
        }
        guard attested.credentialID == answer.credentialID else { throw .wrongCredential }
        try await checkAttestation(
            object, attested, clientDataHash: Data(SHA256.hash(data: answer.clientDataJSON)), now: now)
        let flags = authenticatorData.flags
        return RegisteredPasskey(
            credential: StoredPasskey(
                credentialID: attested.credentialID, publicKeyCBOR: attested.publicKeyCBOR,
                signCount: authenticatorData.signCount, backupEligible: flags.contains(.backupEligible)),
            backedUp: flags.contains(.backedUp), userVerified: flags.contains(.userVerified), aaguid: attested.aaguid,
            attestationFormat: object.format, transports: answer.transports)
    }

    /// Checks an assertion against the challenge its ceremony issued and the credential it names (§7.2 steps 7 to
    /// 24). A counter that does not move forward is refused unless both counters are zero (synced passkeys keep none).
    func verifyAssertion(_ answer: PasskeyAssertionAnswer, challenge: [UInt8], credential: StoredPasskey)
        throws(PasskeyRefusal) -> VerifiedAssertion
    {
        guard answer.credentialID == credential.credentialID else { throw .wrongCredential }
        try checkClientData(answer.clientDataJSON, type: "webauthn.get", challenge: challenge)
        let authenticatorData: AuthenticatorData
        do { authenticatorData = try AuthenticatorData(answer.authenticatorData, decoder: decoder) } catch {
            throw Self.refusal(error)
        }
        guard authenticatorData.attestedCredential == nil else {
            throw .malformed("an assertion carries no attested credential data")
        }
        try checkFlags(authenticatorData)
        let flags = authenticatorData.flags
        guard flags.contains(.backupEligible) == credential.backupEligible else { throw .backupFlagsInvalid }
        let key: COSEPublicKey
        do { key = try COSEPublicKey(cbor: credential.publicKeyCBOR, decoder: decoder) } catch {
            throw .unsupportedAlgorithm
        }
        let signed = answer.authenticatorData + SHA256.hash(data: answer.clientDataJSON)
        guard key.isValidSignature(answer.signature, for: signed) else { throw .invalidSignature }
        let count = authenticatorData.signCount
        if count != 0 || credential.signCount != 0 {
            guard count > credential.signCount else { throw .counterRegressed }
        }
        return VerifiedAssertion(
            signCount: count, userVerified: flags.contains(.userVerified), backedUp: flags.contains(.backedUp),
            backupEligible: flags.contains(.backupEligible))
    }

    /// Whether `origin` is one of the project's: an exact match, scheme and port included.
    func allows(origin: String) -> Bool {
        settings.origins.contains(origin)
    }

    private func checkClientData(_ json: Data, type: String, challenge: [UInt8]) throws(PasskeyRefusal) {
        let clientData: ClientData
        do { clientData = try JSONDecoder().decode(ClientData.self, from: json) } catch {
            throw .malformed("clientDataJSON is not the client data JSON")
        }
        guard clientData.type == type else { throw .wrongType }
        // Browsers send the challenge as unpadded base64url, whose encoding of given bytes is unique.
        guard !challenge.isEmpty,
            CodeGenerator.constantTimeEquals(clientData.challenge, Base64URL.encode(challenge))
        else { throw .challengeMismatch }
        guard allows(origin: clientData.origin), clientData.crossOrigin != true else { throw .originNotAllowed }
    }

    private func checkFlags(_ authenticatorData: AuthenticatorData) throws(PasskeyRefusal) {
        let expected = Data(SHA256.hash(data: Data(settings.rpID.utf8)))
        guard authenticatorData.rpIDHash == expected else { throw .rpIDMismatch }
        let flags = authenticatorData.flags
        guard flags.contains(.userPresent) else { throw .userNotPresent }
        if settings.userVerification == .required, !flags.contains(.userVerified) {
            throw .userVerificationMissing
        }
        if flags.contains(.backedUp), !flags.contains(.backupEligible) { throw .backupFlagsInvalid }
    }

    /// `none` must carry an empty statement; `packed` is verified: self attestation (the credential key signs), or
    /// with `x5c` (§8.2) where the project asks for attestation. A project that asks for `direct` attestation takes
    /// only a verified `packed` statement, and one with `x5c` only when its chain ends at a root the project trusts.
    private func checkAttestation(
        _ object: AttestationObject, _ attested: AttestedCredentialData, clientDataHash: Data, now: Date
    ) async throws(PasskeyRefusal) {
        switch object.format {
        case "none":
            guard object.statement.map?.isEmpty == true else { throw .attestationRefused("none with a statement") }
            guard settings.attestation == .none else { throw .attestationRefused("the project asks for attestation") }
        case "packed":
            guard let algorithm = object.statement["alg"]?.int, let signature = object.statement["sig"]?.bytes else {
                throw .attestationRefused("a packed statement without alg and sig")
            }
            let signed = object.authenticatorData.raw + clientDataHash
            if let x5c = object.statement["x5c"] {
                // Without attestation asked for, who made the authenticator is not used for anything.
                guard settings.attestation == .direct else { return }
                try await checkCertified(
                    x5c, algorithm: algorithm, signature: signature, signed: signed, aaguid: attested.aaguid, now: now)
                return
            }
            guard algorithm == attested.publicKey.algorithm.rawValue else {
                throw .attestationRefused("the self attestation names another algorithm than the credential key")
            }
            guard attested.publicKey.isValidSignature(signature, for: signed) else {
                throw .attestationRefused("the self attestation signature does not verify")
            }
        default:
            // Without attestation asked for, another format's statement is not used for anything, so it is not
            // checked either: the credential is registered as if the format were `none`.
            guard settings.attestation == .none else {
                throw .attestationRefused("the \(object.format) format is not accepted")
            }
        }
    }

    /// The attesting certificate's subject organizational unit (§8.2.1).
    static let attestationUnit = "Authenticator Attestation"
    /// id-fido-gen-ce-aaguid: the authenticator model the attesting certificate vouches for.
    static let aaguidExtension: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 45724, 1, 1, 4]

    /// A `packed` statement with `x5c` (§8.2 step 2): the attesting certificate signs authData ‖ clientDataHash with
    /// ES256, meets §8.2.1 (version 3, subject OU, not a CA, the AAGUID extension equal to the credential's when
    /// present), and chains to one of the project's attestation roots.
    private func checkCertified(
        _ x5c: CBORValue, algorithm: Int, signature: Data, signed: Data, aaguid: Data, now: Date
    ) async throws(PasskeyRefusal) {
        let chain: X5CChain
        do { chain = try X5CChain(x5c, count: 1...8) } catch {
            throw .attestationRefused("x5c is not a chain of certificates")
        }
        let leaf = chain.leaf
        guard algorithm == COSEPublicKey.Algorithm.es256.rawValue, let key = P256.Signing.PublicKey(leaf.publicKey)
        else {
            throw .attestationRefused("the attestation certificate's key is not ES256")
        }
        guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature),
            key.isValidSignature(parsed, for: signed)
        else { throw .attestationRefused("the attestation signature does not verify") }
        guard leaf.version == .v3 else { throw .attestationRefused("the attestation certificate is not version 3") }
        let units = leaf.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.organizationalUnitName }
        guard units.map({ String(describing: $0.value) }) == [Self.attestationUnit] else {
            throw .attestationRefused("the attestation certificate's subject OU is not \(Self.attestationUnit)")
        }
        guard case .notCertificateAuthority? = try? leaf.extensions.basicConstraints else {
            throw .attestationRefused("the attestation certificate is a certificate authority")
        }
        if let stated = leaf.extensions[oid: Self.aaguidExtension] {
            // An OCTET STRING holding the 16-byte AAGUID; never critical.
            guard !stated.critical, let octets = try? ASN1OctetString(derEncoded: stated.value),
                Data(octets.bytes) == aaguid
            else { throw .attestationRefused("the attestation certificate is for another authenticator model") }
        }
        guard await chain.isTrusted(by: settings.attestationRootCertificates, at: now) else {
            throw .attestationUntrusted
        }
    }

    private static func refusal(_ error: AuthenticatorDataError) -> PasskeyRefusal {
        switch error {
        case .invalidPublicKey(.unsupportedAlgorithm): .unsupportedAlgorithm
        case .invalidPublicKey: .malformed("the credential public key is not a valid COSE key")
        case .truncated, .trailingBytes, .credentialIDTooLong, .malformedCBOR, .malformedAttestationObject:
            .malformed("the authenticator data or attestation object is not well formed")
        }
    }
}
