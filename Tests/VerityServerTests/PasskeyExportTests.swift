import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// Writes ceremonies made by ``SoftwareAuthenticator`` in the standard JSON serialisation of a `PublicKeyCredential`,
/// for Tests/passkeys/independent_check.sh to verify with another relying party (PyPI `webauthn`). Without
/// `VERITY_PASSKEY_EXPORT_DIR` it only checks that Verity's own relying party takes them.
@Suite("Passkey ceremonies for an independent check")
struct PasskeyExportTests {
    @Test("A none and a packed registration and an assertion, written as PublicKeyCredential JSON")
    func export() async throws {
        let settings = PasskeySettings(rpID: "example.com", rpName: "Example", origins: ["https://example.com"])
        let party = PasskeyRelyingParty(settings: settings)
        var authenticator = SoftwareAuthenticator()
        let registrationChallenge = [UInt8](repeating: 0x11, count: 32)
        let assertionChallenge = [UInt8](repeating: 0x22, count: 32)
        let none = authenticator.register(challenge: registrationChallenge, userHandle: Data("usr_1".utf8))
        let packed = authenticator.register(
            challenge: registrationChallenge, userHandle: Data("usr_1".utf8), attestation: .packed)
        let stored = try await party.verifyRegistration(none.answer, challenge: registrationChallenge)
        _ = try await party.verifyRegistration(packed.answer, challenge: registrationChallenge)
        let assertion = try authenticator.assert(challenge: assertionChallenge, credentialID: none.credentialID)
        _ = try party.verifyAssertion(assertion.answer, challenge: assertionChallenge, credential: stored.credential)

        guard let directory = ProcessInfo.processInfo.environment["VERITY_PASSKEY_EXPORT_DIR"] else { return }
        let b64 = { (data: Data) in Base64URL.encode(data) }
        let ceremonies: [String: Any] = [
            "rpId": settings.rpID, "origin": "https://example.com",
            "registrationChallenge": b64(Data(registrationChallenge)),
            "assertionChallenge": b64(Data(assertionChallenge)),
            "registrations": [none.json, packed.json], "assertion": assertion.json,
            "storedPublicKey": b64(stored.credential.publicKeyCBOR),
            "storedSignCount": Int(stored.credential.signCount),
        ]
        let json = try JSONSerialization.data(withJSONObject: ceremonies, options: [.sortedKeys])
        try json.write(to: URL(fileURLWithPath: directory).appendingPathComponent("ceremonies.json"))
    }
}
