import Crypto
import Foundation
import Testing
import VerityCore

@testable import VerityKit

/// What VerityKit asks the Keychain and the Secure Enclave, checked against the rules Apple documents by a recording
/// double behind the same function table the real calls fill.
@Suite("Keychain queries")
struct KeychainQueryTests {
    static let group = "TEAMID.com.example.shared"

    /// A VerityPush over a Keychain store on the double, with a scripted prompt.
    struct Phone {
        let keychain: RecordingKeychain
        let store: KeychainSecureStore
        let transport = RecordingTransport()
        let verifier: ScriptedUserVerifier
        let push: VerityPush

        init(
            keychain: RecordingKeychain = RecordingKeychain(), accessGroup: String? = KeychainQueryTests.group,
            allowIphoneMigration: Bool = false, outcomes: [UserVerificationOutcome] = []
        ) throws {
            self.keychain = keychain
            store = KeychainSecureStore(
                service: "io.verity.kit", accessGroup: accessGroup, allowIphoneMigration: allowIphoneMigration,
                calls: keychain.table)
            verifier = ScriptedUserVerifier(outcomes)
            push = VerityPush(
                configuration: VerityConfiguration(baseURL: try Fixture.baseURL(), appId: "com.example.app"),
                transport: transport, store: store, clock: { Fixture.now },
                installationMarker: TestInstallationMarker(present: true), userVerifier: verifier)
        }

        func enroll(withUserVerification: Bool) async throws -> PushFactor {
            await transport.enqueue(
                try Fixture.json(
                    EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce),
                    status: 201))
            await transport.enqueue(try Fixture.json(Fixture.factor(status: .verified)))
            _ = try await push.createFactor(
                enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .apns,
                pushToken: Fixture.pushToken, withUserVerification: withUserVerification)
            return try await push.verifyFactor(Fixture.factorId)
        }

        /// Enrolls with a user-verification key and approves a `preferred` challenge, which prompts.
        func enrollAndApprove() async throws -> PushFactor {
            let factor = try await enroll(withUserVerification: true)
            await transport.enqueue(try Fixture.json(Fixture.challenge()))
            await transport.enqueue(try Fixture.json(Fixture.challenge(status: .approved)))
            _ = try await push.approve(challengeId: Fixture.challengeId, factorId: factor.id)
            return factor
        }
    }

    @Test("every query VerityKit makes, from enrollment to an answer and deletion, follows Apple's rules")
    func everyQueryFollowsTheRules() async throws {
        let phone = try Phone(outcomes: [.verified(.face)])
        let factor = try await phone.enrollAndApprove()
        await phone.transport.enqueue(TransportResponse(status: 204, headers: [:], body: Data()))
        try await phone.push.deleteFactor(factor.id)
        try phone.store.removeAll()

        #expect(phone.keychain.violations == [])
        let functions = Set(phone.keychain.calls.map(\.function))
        #expect(
            functions == [
                "SecItemAdd", "SecItemCopyMatching", "SecItemUpdate", "SecItemDelete", "SecKeyCreateRandomKey",
                "SecKeyCreateSignature",
            ])
        // Every item and key query names the store's access group.
        for call in phone.keychain.calls where call.function != "SecKeyCreateSignature" {
            #expect(call.query.accessGroup == Self.group, "\(call.function) without the access group")
        }
        #expect(phone.keychain.items.isEmpty && phone.keychain.keys.isEmpty)
    }

    @Test(
        "both device keys are P-256 Secure Enclave keys with .privateKeyUsage; the user-verification key also needs the owner"
    )
    func secureEnclaveKeys() async throws {
        let phone = try Phone()
        _ = try await phone.enroll(withUserVerification: true)
        let created = phone.keychain.calls.filter { $0.function == "SecKeyCreateRandomKey" }.map(\.query)
        try #require(created.count == 2)
        for query in created {
            #expect(query.itemClass == .key && query.isP256Key && query.isInSecureEnclave)
            #expect(query.privateKeyAccessControl?.accessibility == .afterFirstUnlockThisDeviceOnly)
            #expect(query.accessGroup == Self.group)
        }
        #expect(created[0].privateKeyAccessControl?.flags == [.privateKeyUsage])
        #expect(created[1].privateKeyAccessControl?.flags == [.privateKeyUsage, .userPresence])
        // Only a record of each key is kept as an item; no private key material is.
        for item in phone.keychain.items where item.account.hasPrefix("verity.key.") {
            let record = try JSONSerialization.jsonObject(with: item.value) as? [String: Any]
            #expect(record?["kind"] as? String == "keychain")
            #expect(record?["data"] as? String == "")
        }
    }

    @Test(
        "items stay on this device unless migration is allowed, and device keys stay even then",
        arguments: [false, true])
    func accessibility(allowIphoneMigration: Bool) async throws {
        let phone = try Phone(
            keychain: RecordingKeychain(hasSecureEnclave: false), allowIphoneMigration: allowIphoneMigration)
        _ = try await phone.enroll(withUserVerification: false)
        let keyRecords = phone.keychain.items.filter { $0.account.hasPrefix("verity.key.") }
        let others = phone.keychain.items.filter { !$0.account.hasPrefix("verity.key.") }
        try #require(!keyRecords.isEmpty && !others.isEmpty)
        // Without a Secure Enclave the silent key is a software key, whose private scalar is this item.
        #expect(keyRecords.allSatisfy { $0.accessible == .afterFirstUnlockThisDeviceOnly })
        #expect(
            others.allSatisfy {
                $0.accessible == (allowIphoneMigration ? .afterFirstUnlock : .afterFirstUnlockThisDeviceOnly)
            })
        #expect(phone.keychain.violations == [])
    }

    @Test("one prompt: the verifier's context reaches the key, and the system does not ask again")
    func onePrompt() async throws {
        let phone = try Phone(outcomes: [.verified(.face)])
        let factor = try await phone.enrollAndApprove()

        #expect(phone.verifier.prompts.count == 1)
        #expect(phone.keychain.systemPrompts == 0)
        let context = try #require(phone.verifier.contexts.first)
        let tag = Data("verity.key.\(try #require(factor.userVerificationKeyReference))".utf8)
        let lookups = phone.keychain.calls.filter {
            $0.function == "SecItemCopyMatching" && $0.query.applicationTag == tag && $0.query.returnsReference
        }
        #expect(lookups.map { $0.query.authenticationContext } == [context])
        let respond = await phone.transport.requests[3]
        let body = try decodeBody(RespondChallengeRequest.self, of: respond)
        #expect(body.keyType == .userVerification)
        #expect(body.amr == [.face])
    }

    @Test("a prompt the key shows itself, cancelled or failed, is the owner's answer: a userVerification error")
    func keyPromptFailure() async throws {
        let phone = try Phone()
        let handle = try FactorKeyStore(
            store: phone.store, namespace: "verity", enclave: phone.store.secureEnclaveKeys,
            allowsSoftwareUserVerificationKeys: false
        ).createKey(requiringUserVerification: true)
        let keys = FactorKeyStore(
            store: phone.store, namespace: "verity", enclave: phone.store.secureEnclaveKeys,
            allowsSoftwareUserVerificationKeys: false)
        let payload = ChallengeSigningPayload(
            challengeId: Fixture.challengeId, factorId: Fixture.factorId, contentHash: "h", status: .approved)
        for (answer, expected) in [
            (KeychainStatus.userCanceled, UserVerificationResult.cancelled), (.authFailed, .failed),
        ] {
            phone.keychain.promptAnswer = answer
            #expect(throws: VerityKitError.userVerification(expected)) {
                try keys.signChallengeAnswer(payload, keyID: Fixture.factorId, reference: handle.reference)
            }
        }
        #expect(phone.keychain.systemPrompts == 2)
    }

    @Test("moving into a newly added access group moves the items and the Secure Enclave keys")
    func moveIntoAccessGroup() async throws {
        let keychain = RecordingKeychain()
        let before = try Phone(keychain: keychain, accessGroup: nil)
        let factor = try await before.enroll(withUserVerification: true)
        #expect(keychain.items.allSatisfy { $0.accessGroup == keychain.defaultGroup })

        let after = try Phone(keychain: keychain, accessGroup: Self.group)
        #expect(try await after.push.factors().isEmpty)
        try after.store.moveItemsIntoAccessGroup()

        #expect(keychain.items.allSatisfy { $0.accessGroup == Self.group })
        #expect(keychain.keys.count == 2 && keychain.keys.allSatisfy { $0.accessGroup == Self.group })
        let moves = keychain.calls.filter { $0.function == "SecItemUpdate" && $0.changes?.accessGroup == Self.group }
        #expect(moves.map(\.query.itemClass) == [.genericPassword, .key])
        #expect(try await after.push.factors().map(\.id) == [factor.id])
        #expect(keychain.violations == [])
    }

    @Test("a user-verification key needs a Secure Enclave, unless a test asks for a software one")
    func userVerificationKeyNeedsTheEnclave() throws {
        let store = InMemorySecureStore()
        #expect(throws: VerityKitError.self) {
            try FactorKeyStore(store: store, allowsSecureEnclave: false).createKey(requiringUserVerification: true)
        }
        #expect(store.allItems.isEmpty)
        let testing = FactorKeyStore(
            store: store, allowsSecureEnclave: false, allowsSoftwareUserVerificationKeysForTesting: true)
        #expect(try testing.createKey(requiringUserVerification: true).isHardwareBacked == false)
    }
}
