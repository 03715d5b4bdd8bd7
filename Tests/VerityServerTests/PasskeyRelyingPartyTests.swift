import Crypto
import Foundation
import Testing

@testable import VerityServer

@Suite("Passkey relying party checks")
struct PasskeyRelyingPartyTests {
    static let settings = PasskeySettings(
        rpID: "example.com", rpName: "Example", origins: ["https://example.com", "android:apk-key-hash:abc"])
    let party = PasskeyRelyingParty(settings: Self.settings)
    let challenge: [UInt8] = Array(repeating: 7, count: 32)
    let userHandle = Data("usr_1".utf8)

    func registered(_ authenticator: inout SoftwareAuthenticator) async throws -> RegisteredPasskey {
        let registration = authenticator.register(challenge: challenge, userHandle: userHandle)
        return try await party.verifyRegistration(registration.answer, challenge: challenge)
    }

    @Test("A registration and an assertion from the software authenticator pass, with amr and acr by BE and UV")
    func roundTrip() async throws {
        var authenticator = SoftwareAuthenticator()
        let passkey = try await registered(&authenticator)
        #expect(passkey.credential.signCount == 1)
        #expect(passkey.userVerified)
        #expect(passkey.attestationFormat == "none")
        let next: [UInt8] = Array(repeating: 9, count: 32)
        let assertion = try authenticator.assert(challenge: next, credentialID: passkey.credential.credentialID)
        let verified = try party.verifyAssertion(assertion.answer, challenge: next, credential: passkey.credential)
        #expect(verified.signCount == 2)
        #expect(verified.amr == ["hwk", "user"])
        #expect(verified.acr == "mfa")

        var synced = SoftwareAuthenticator(origin: "android:apk-key-hash:abc")
        synced.backupEligible = true
        synced.backedUp = true
        synced.userVerified = false
        synced.counting = false
        let syncedKey = try await registered(&synced)
        let syncedAssertion = try synced.assert(challenge: next, credentialID: syncedKey.credential.credentialID)
        let syncedResult = try party.verifyAssertion(
            syncedAssertion.answer, challenge: next, credential: syncedKey.credential)
        #expect(syncedResult.amr == ["swk"])
        #expect(syncedResult.acr == nil)
        #expect(syncedResult.signCount == 0)
    }

    @Test("packed self attestation is verified; a forged one is refused; direct attestation refuses none")
    func packed() async throws {
        var authenticator = SoftwareAuthenticator()
        let registration = authenticator.register(challenge: challenge, userHandle: userHandle, attestation: .packed)
        let direct = PasskeyRelyingParty(
            settings: {
                var s = Self.settings; s.attestation = .direct; return s
            }())
        #expect(
            try await direct.verifyRegistration(registration.answer, challenge: challenge).attestationFormat == "packed"
        )
        #expect(
            try await party.verifyRegistration(registration.answer, challenge: challenge).attestationFormat == "packed")

        var forged = registration
        forged.clientDataJSON = Data(forged.clientDataJSON.reversed().reversed())
        forged.clientDataJSON.append(contentsOf: Array(" ".utf8))
        await #expect(throws: PasskeyRefusal.attestationRefused("the self attestation signature does not verify")) {
            try await direct.verifyRegistration(forged.answer, challenge: challenge)
        }
        let plain = authenticator.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.attestationRefused("the project asks for attestation")) {
            try await direct.verifyRegistration(plain.answer, challenge: challenge)
        }
    }

    @Test("A registration for another challenge, origin, relying party or ceremony is refused")
    func registrationRefusals() async throws {
        var authenticator = SoftwareAuthenticator()
        let other = authenticator.register(challenge: [1, 2, 3], userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.challengeMismatch) {
            try await party.verifyRegistration(other.answer, challenge: challenge)
        }

        var wrongOrigin = SoftwareAuthenticator(origin: "https://evil.example")
        let fromEvil = wrongOrigin.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.originNotAllowed) {
            try await party.verifyRegistration(fromEvil.answer, challenge: challenge)
        }

        var wrongRP = SoftwareAuthenticator(rpID: "evil.example")
        let scopedElsewhere = wrongRP.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.rpIDMismatch) {
            try await party.verifyRegistration(scopedElsewhere.answer, challenge: challenge)
        }

        var wrongType = SoftwareAuthenticator()
        wrongType.clientDataType = "webauthn.get"
        let mixedUp = wrongType.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.wrongType) {
            try await party.verifyRegistration(mixedUp.answer, challenge: challenge)
        }

        var notPresent = SoftwareAuthenticator()
        notPresent.userPresent = false
        let absent = notPresent.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.userNotPresent) {
            try await party.verifyRegistration(absent.answer, challenge: challenge)
        }

        var renamed = authenticator.register(challenge: challenge, userHandle: userHandle)
        renamed.credentialID = Data([1])
        await #expect(throws: PasskeyRefusal.wrongCredential) {
            try await party.verifyRegistration(renamed.answer, challenge: challenge)
        }
    }

    @Test(
        "Every refusal is a 4xx with a stable code",
        arguments: [
            PasskeyRefusal.malformed("x"), .wrongType, .challengeMismatch, .originNotAllowed, .rpIDMismatch,
            .userNotPresent, .userVerificationMissing, .backupFlagsInvalid, .unsupportedAlgorithm,
            .attestationRefused("x"), .invalidSignature, .counterRegressed, .wrongCredential,
        ])
    func refusalCodes(refusal: PasskeyRefusal) {
        #expect((400..<500).contains(refusal.verityError.code.httpStatus))
    }

    @Test("Missing UV is refused where the project requires it, at registration and sign-in")
    func userVerification() async throws {
        let strict = PasskeyRelyingParty(
            settings: {
                var s = Self.settings; s.userVerification = .required; return s
            }())
        var authenticator = SoftwareAuthenticator()
        authenticator.userVerified = false
        let registration = authenticator.register(challenge: challenge, userHandle: userHandle)
        await #expect(throws: PasskeyRefusal.userVerificationMissing) {
            try await strict.verifyRegistration(registration.answer, challenge: challenge)
        }
        let passkey = try await party.verifyRegistration(registration.answer, challenge: challenge)
        let assertion = try authenticator.assert(challenge: challenge, credentialID: passkey.credential.credentialID)
        #expect(throws: PasskeyRefusal.userVerificationMissing) {
            try strict.verifyAssertion(assertion.answer, challenge: challenge, credential: passkey.credential)
        }
    }

    @Test(
        "Assertions for an unissued challenge, a flipped bit, a wrong origin or credential, a lower counter are refused"
    )
    func assertionRefusals() async throws {
        var authenticator = SoftwareAuthenticator()
        let passkey = try await registered(&authenticator)
        let id = passkey.credential.credentialID
        var assertion = try authenticator.assert(challenge: [4, 4, 4], credentialID: id)
        #expect(throws: PasskeyRefusal.challengeMismatch) {
            try party.verifyAssertion(assertion.answer, challenge: challenge, credential: passkey.credential)
        }

        assertion = try authenticator.assert(challenge: challenge, credentialID: id)
        var flipped = assertion
        flipped.signature[flipped.signature.count - 1] ^= 0x01
        #expect(throws: PasskeyRefusal.invalidSignature) {
            try party.verifyAssertion(flipped.answer, challenge: challenge, credential: passkey.credential)
        }
        var tamperedData = assertion
        tamperedData.authenticatorData[33] ^= 0x01
        #expect(throws: PasskeyRefusal.invalidSignature) {
            try party.verifyAssertion(tamperedData.answer, challenge: challenge, credential: passkey.credential)
        }

        var other = SoftwareAuthenticator()
        let otherKey = try await registered(&other)
        let otherAssertion = try other.assert(challenge: challenge, credentialID: otherKey.credential.credentialID)
        #expect(throws: PasskeyRefusal.wrongCredential) {
            try party.verifyAssertion(otherAssertion.answer, challenge: challenge, credential: passkey.credential)
        }
        var swapped = otherAssertion
        swapped.credentialID = id
        #expect(throws: PasskeyRefusal.invalidSignature) {
            try party.verifyAssertion(swapped.answer, challenge: challenge, credential: passkey.credential)
        }

        var evil = authenticator
        evil.origin = "https://example.com.evil.example"
        let fromEvil = try evil.assert(challenge: challenge, credentialID: id)
        #expect(throws: PasskeyRefusal.originNotAllowed) {
            try party.verifyAssertion(fromEvil.answer, challenge: challenge, credential: passkey.credential)
        }

        var later = passkey.credential
        later.signCount = 50
        let behind = try authenticator.assert(challenge: challenge, credentialID: id)
        #expect(throws: PasskeyRefusal.counterRegressed) {
            try party.verifyAssertion(behind.answer, challenge: challenge, credential: later)
        }
        var zero = authenticator
        zero.counting = false
        zero.counter = 0
        let zeroAfterCount = try zero.assert(challenge: challenge, credentialID: id)
        #expect(throws: PasskeyRefusal.counterRegressed) {
            try party.verifyAssertion(zeroAfterCount.answer, challenge: challenge, credential: passkey.credential)
        }

        var nowSynced = authenticator
        nowSynced.backupEligible = true
        let changed = try nowSynced.assert(challenge: challenge, credentialID: id)
        #expect(throws: PasskeyRefusal.backupFlagsInvalid) {
            try party.verifyAssertion(changed.answer, challenge: challenge, credential: passkey.credential)
        }
    }
}

@Suite("Passkey settings and options")
struct PasskeySettingsTests {
    @Test(
        "Settings take https origins on the relying-party id or a subdomain and Android app origins",
        arguments: [
            "https://example.com", "https://login.example.com", "https://example.com:8443",
            "android:apk-key-hash:" + String(repeating: "A", count: 43),
        ])
    func goodOrigin(origin: String) async throws {
        let settings = PasskeySettings(rpID: "example.com", rpName: "Example", origins: [origin, origin])
        #expect(try settings.validated().origins == [origin])
    }

    @Test(
        "Settings refuse origins that are not on the relying-party id, not https, or not bare origins",
        arguments: [
            "http://example.com", "https://example.com.evil.example", "https://notexample.com",
            "https://example.com/", "https://example.com/login", "https://user@example.com", "example.com",
            "android:apk-key-hash:short", "ftp://example.com",
        ])
    func badOrigin(origin: String) {
        let settings = PasskeySettings(rpID: "example.com", rpName: "Example", origins: [origin])
        #expect(throws: ConfigurationError.self) { try settings.validated() }
    }

    @Test("Settings refuse a relying-party id that is not a domain name, an empty name, no origin, a long lifetime")
    func badSettings() {
        for rpID in ["", "Example.com", "https://example.com", "exa mple.com", "-example.com", "example..com"] {
            let settings = PasskeySettings(rpID: rpID, rpName: "Example", origins: ["https://example.com"])
            #expect(throws: ConfigurationError.self) { try settings.validated() }
        }
        #expect(throws: ConfigurationError.self) {
            try PasskeySettings(rpID: "example.com", rpName: "", origins: ["https://example.com"]).validated()
        }
        #expect(throws: ConfigurationError.self) {
            try PasskeySettings(rpID: "example.com", rpName: "Example", origins: []).validated()
        }
        var long = PasskeySettings(rpID: "example.com", rpName: "Example", origins: ["https://example.com"])
        long.challengeLifetime = 3600
        #expect(throws: ConfigurationError.self) { try long.validated() }
    }

    @Test("Creation options exclude the user's credentials and carry the project's preferences")
    func options() {
        var settings = PasskeySettings(rpID: "example.com", rpName: "Example", origins: ["https://example.com"])
        settings.userVerification = .required
        settings.residentKey = .required
        settings.attachment = .platform
        let party = PasskeyRelyingParty(settings: settings)
        let existing = [PasskeyCredentialDescriptor(id: Data([1, 2]), transports: ["internal"])]
        let creation = party.creationOptions(
            challenge: [9], userHandle: Data([7]), userName: "ada@example.com", userDisplayName: "Ada",
            existing: existing)
        #expect(creation.excludeCredentials == existing)
        #expect(creation.algorithms == [.es256, .edDSA, .rs256])
        #expect(creation.userVerification == .required)
        #expect(creation.residentKey == .required)
        #expect(creation.attachment == .platform)
        #expect(creation.timeout == 300)
        let request = party.requestOptions(challenge: [9], allowed: [])
        #expect(request.allowCredentials.isEmpty)
        #expect(request.rpID == "example.com")
        #expect(request.userVerification == .required)
    }
}
