import Crypto
import Foundation
import Testing
import VerityCore
import VerityTestSupport
import X509

@testable import VerityServer

/// `packed` attestation with an `x5c` chain (WebAuthn L3 §8.2), where the project asks for `direct` attestation:
/// checked against roots the project configures, with a test CA made here in place of the FIDO Metadata Service's.
@Suite("Passkey attestation with a certificate chain")
struct PasskeyAttestationTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let challenge: [UInt8] = Array(repeating: 7, count: 32)
    let model = Data((1...16).map { UInt8($0) })

    /// The relying party of a project that asks for `direct` attestation and trusts `roots`.
    func party(trusting roots: [AttestationTestCA], attestation: PasskeySettings.Attestation = .direct) throws
        -> PasskeyRelyingParty
    {
        var settings = PasskeyRelyingPartyTests.settings
        settings.attestation = attestation
        settings.attestationRoots = roots.isEmpty ? nil : try roots.map { try $0.rootPEM }.joined(separator: "\n")
        return PasskeyRelyingParty(settings: settings)
    }

    /// A registration answer of an authenticator of model `aaguid` attested by `certificate`.
    func registration(_ certificate: SoftwareAuthenticator.AttestationCertificate, aaguid: Data? = nil)
        -> SoftwareAuthenticator.Registration
    {
        var authenticator = SoftwareAuthenticator()
        authenticator.aaguid = aaguid ?? model
        return authenticator.register(
            challenge: challenge, userHandle: Data("usr_1".utf8), attestation: .packedX5C(certificate))
    }

    @Test("A chain to a configured root registers the credential with its model's AAGUID")
    func goodChain() async throws {
        let vendor = try AttestationTestCA(now: now)
        let party = try party(trusting: [try AttestationTestCA(now: now, name: "Another vendor"), vendor])
        let registered = try await party.verifyRegistration(
            registration(try vendor.attestation(aaguid: model)).answer, challenge: challenge, now: now)
        #expect(registered.attestationFormat == "packed")
        #expect(registered.aaguid == model)
        // Without the AAGUID extension the certificate names no model, so none can disagree.
        _ = try await party.verifyRegistration(
            registration(try vendor.attestation(aaguid: nil)).answer, challenge: challenge, now: now)
    }

    @Test("A chain to a root the project does not trust, or a project that trusts none, is refused")
    func untrusted() async throws {
        let vendor = try AttestationTestCA(now: now)
        let answer = registration(try vendor.attestation(aaguid: model)).answer
        let other = try party(trusting: [try AttestationTestCA(now: now, name: "Another vendor")])
        await #expect(throws: PasskeyRefusal.attestationUntrusted) {
            try await other.verifyRegistration(answer, challenge: challenge, now: now)
        }
        await #expect(throws: PasskeyRefusal.attestationUntrusted) {
            try await party(trusting: []).verifyRegistration(answer, challenge: challenge, now: now)
        }
        // Past the certificates' validity.
        await #expect(throws: PasskeyRefusal.attestationUntrusted) {
            try await party(trusting: [vendor]).verifyRegistration(
                answer, challenge: challenge, now: now.addingTimeInterval(2 * 365 * 86_400))
        }
        #expect(PasskeyRefusal.attestationUntrusted.verityError.code == .forbidden)
        // A project that asks for no attestation does not use who made the authenticator: nothing to trust.
        let plain = try party(trusting: [], attestation: .none)
        #expect(
            try await plain.verifyRegistration(answer, challenge: challenge, now: now).attestationFormat == "packed")
    }

    @Test("The attesting certificate must be for the authenticator's model, not a CA, in the attestation OU")
    func leafRequirements() async throws {
        let vendor = try AttestationTestCA(now: now)
        let party = try party(trusting: [vendor])
        let cases: [(SoftwareAuthenticator.AttestationCertificate, String)] = [
            (
                try vendor.attestation(aaguid: Data(repeating: 9, count: 16)),
                "the attestation certificate is for another authenticator model"
            ),
            (
                try vendor.attestation(aaguid: model, authority: true),
                "the attestation certificate is a certificate authority"
            ),
            (
                try vendor.attestation(aaguid: model, unit: "Marketing"),
                "the attestation certificate's subject OU is not Authenticator Attestation"
            ),
        ]
        for (certificate, why) in cases {
            await #expect(throws: PasskeyRefusal.attestationRefused(why)) {
                try await party.verifyRegistration(
                    registration(certificate).answer, challenge: challenge, now: now)
            }
        }
    }

    @Test("A signature that is not the attesting key's over authData and the client data hash is refused")
    func badSignature() async throws {
        let vendor = try AttestationTestCA(now: now)
        let party = try party(trusting: [vendor])
        // Client data changed after signing: the signature covers another hash.
        var changed = registration(try vendor.attestation(aaguid: model))
        changed.clientDataJSON.append(contentsOf: Array(" ".utf8))
        // Signed by another key than the certificate's.
        var certificate = try vendor.attestation(aaguid: model)
        certificate.key = P256.Signing.PrivateKey()
        for answer in [changed.answer, registration(certificate).answer] {
            await #expect(throws: PasskeyRefusal.attestationRefused("the attestation signature does not verify")) {
                try await party.verifyRegistration(answer, challenge: challenge, now: now)
            }
        }
    }

    @Test(
        "A project asking for direct attestation stores a passkey whose chain it trusts, and nothing for one it does not",
        arguments: TestEngine.available)
    func stored(engine: TestEngine) async throws {
        let (node, project, user) = try await PasskeyServiceTests.node(engine)
        let vendor = try AttestationTestCA(now: node.clock.now())
        let stranger = try AttestationTestCA(now: node.clock.now(), name: "Unknown vendor")
        let change = try ProjectSettingsChange([
            .passkeyAttestation: "direct", .passkeyAttestationRoots: try vendor.rootPEM,
        ])
        _ = try await node.verity.admin.updateProject(id: project.id, name: nil) { change.apply(to: &$0) }
        let direct = try await node.verity.admin.project(id: project.id)
        let passkeys = node.verity.passkeys
        var authenticator = SoftwareAuthenticator()
        authenticator.aaguid = model

        let refused = try await passkeys.registrationOptions(for: user, in: direct)
        let untrusted = authenticator.register(
            challenge: refused.challenge, userHandle: refused.userHandle,
            attestation: .packedX5C(try stranger.attestation(aaguid: model)))
        #expect(
            await PasskeyServiceTests.code {
                try await passkeys.register(untrusted.answer, friendlyName: nil, for: user, in: direct)
            } == .forbidden)
        #expect(try await passkeys.passkeys(userId: user.id, in: direct).isEmpty)

        let options = try await passkeys.registrationOptions(for: user, in: direct)
        let trusted = authenticator.register(
            challenge: options.challenge, userHandle: options.userHandle,
            attestation: .packedX5C(try vendor.attestation(aaguid: model)))
        let passkey = try await passkeys.register(trusted.answer, friendlyName: nil, for: user, in: direct)
        #expect(passkey.attestationFormat == "packed" && passkey.aaguid == model)
        #expect(try await passkeys.passkeys(userId: user.id, in: direct).map(\.id) == [passkey.id])
    }

    @Test("verity admin project's words take the roots as PEM; none clears them; text that is not PEM is refused")
    func settings() throws {
        let vendor = try AttestationTestCA(now: now)
        var settings = ProjectSettings()
        var text = PasskeyProjectSettingsTests.change
        text[.passkeyAttestation] = "direct"
        text[.passkeyAttestationRoots] = try vendor.rootPEM
        try ProjectSettingsChange(text).apply(to: &settings)
        let roots = try #require(try settings.validated().passkeys?.attestationRootCertificates)
        #expect(roots == [vendor.root])
        try ProjectSettingsChange([.passkeyAttestationRoots: "none"]).apply(to: &settings)
        #expect(settings.passkeys?.attestationRoots == nil)
        try ProjectSettingsChange([.passkeyAttestationRoots: "not a certificate"]).apply(to: &settings)
        #expect(throws: ConfigurationError.self) { try settings.validated() }
    }
}
