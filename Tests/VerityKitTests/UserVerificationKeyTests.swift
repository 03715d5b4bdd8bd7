import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("User-verification keys and the scripted prompt")
struct UserVerificationKeyTests {
    static let answer = ChallengeSigningPayload(
        challengeId: "chl_1", factorId: "fac_1", contentHash: "h", status: .approved, keyType: .userVerification,
        amr: [.face], userVerificationResult: .verified)

    @Test("a software user-verification key (tests only) signs only after the owner verified")
    func signsOnlyAfterVerification() throws {
        // Only the explicit testing switch allows a user-verification key outside the Secure Enclave.
        let keys = FactorKeyStore(
            store: InMemorySecureStore(), allowsSecureEnclave: false, allowsSoftwareUserVerificationKeysForTesting: true
        )
        let key = try keys.createKey(requiringUserVerification: true)
        #expect(key.requiresUserVerification)
        #expect(throws: VerityKitError.self) {
            try keys.signChallengeAnswer(Self.answer, keyID: "fac_1", reference: key.reference)
        }
        let token = try keys.signChallengeAnswer(
            Self.answer, keyID: "fac_1", reference: key.reference, userVerified: true)
        #expect(try ChallengeSigningPayload.verify(token, expected: Self.answer, key: key.publicKey) == .approved)

        // A silent key needs no verification.
        let silent = try keys.createKey()
        #expect(!silent.requiresUserVerification)
        _ = try keys.signChallengeAnswer(Self.answer, keyID: "fac_1", reference: silent.reference)
    }

    @Test("the signed statement is verified: a changed key type, amr or reason is a mismatch")
    func statementIsSigned() throws {
        let key = P256.Signing.PrivateKey()
        let token = try Self.answer.sign(using: key, keyID: "fac_1")
        var changed = Self.answer
        changed.amr = [.pin]
        #expect(throws: ChallengeVerificationError.mismatchedFields(["amr"])) {
            try ChallengeSigningPayload.verify(token, expected: changed, key: key.publicKey)
        }
        changed = Self.answer
        changed.keyType = nil
        changed.reason = .notMe
        #expect(throws: ChallengeVerificationError.mismatchedFields(["keyType", "reason"])) {
            try ChallengeSigningPayload.verify(token, expected: changed, key: key.publicKey)
        }
    }

    @Test("the context is part of the content hash; without one the hash is the old one")
    func contextIsHashed() {
        let details = [(label: "IP", value: "203.0.113.7")]
        let plain = ChallengeSigningPayload.contentHash(message: "Sign in?", details: details)
        #expect(
            ChallengeSigningPayload.displayedContentHash(message: "Sign in?", details: details, context: nil) == plain)
        let berlin = ChallengeContext(location: "Berlin", time: Date(timeIntervalSince1970: 1_700_000_000))
        let hashed = ChallengeSigningPayload.displayedContentHash(
            message: "Sign in?", details: details, context: berlin)
        #expect(hashed != plain)
        var paris = berlin
        paris.location = "Paris"
        #expect(
            ChallengeSigningPayload.displayedContentHash(message: "Sign in?", details: details, context: paris)
                != hashed)
        var later = berlin
        later.time = Date(timeIntervalSince1970: 1_700_000_001)
        #expect(
            ChallengeSigningPayload.displayedContentHash(message: "Sign in?", details: details, context: later)
                != hashed)
    }

    @Test("the scripted prompt plays its outcomes in order, then its fallback, and records the reasons")
    func scriptedPrompt() async {
        let verifier = ScriptedUserVerifier([.cancelled, .verified(.fpt)], fallback: .unavailable)
        #expect(await verifier.verifyUser(reason: "a") == .cancelled)
        #expect(await verifier.verifyUser(reason: "b") == .verified(.fpt))
        #expect(await verifier.verifyUser(reason: "c") == .unavailable)
        #expect(verifier.prompts == ["a", "b", "c"])
        #expect(UserVerificationOutcome.verified(.face).result == .verified)
    }
}
