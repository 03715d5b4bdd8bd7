import Crypto
import Foundation
import Testing
import VerityCore

@testable import VerityKit

/// The notification kit (categories, actions, the response mapping, the service extension's content), the signed
/// `amr`, the rule that a failed prompt approves nothing by itself, and the storage and push-token options.
@Suite("Notification kit and device trust options")
struct NotificationKitTests {
    static var userInfo: [AnyHashable: Any] {
        ["type": "verity.challenge", "challengeId": Fixture.challengeId, "factorId": Fixture.factorId]
    }

    @Test("each action maps to approve, deny or \"this wasn't me\"; anything else opens the app")
    func responseMapping() throws {
        let cases: [(String, NotificationResponseDecision.Action)] = [
            (VerityNotificationCategory.approveAction, .approve),
            (VerityNotificationCategory.denyAction, .deny(nil)),
            (VerityNotificationCategory.notMeAction, .deny(.notMe)),
            ("com.apple.UNNotificationDefaultActionIdentifier", .open),
        ]
        for (identifier, action) in cases {
            let decision = try NotificationResponseDecision(actionIdentifier: identifier, userInfo: Self.userInfo)
            #expect(decision.action == action)
            #expect(decision.notification.challengeId == Fixture.challengeId)
        }
        #expect(throws: VerityKitError.self) {
            try NotificationResponseDecision(actionIdentifier: "VERITY_APPROVE", userInfo: ["type": "other"])
        }
    }

    @Test("Approve needs the phone unlocked, and opens the app where the challenge needs the owner")
    func actions() {
        for category in [VerityNotificationCategory.standard, VerityNotificationCategory.userVerification] {
            let actions = VerityNotificationCategory.actions(for: category)
            #expect(actions.map(\.identifier) == ["VERITY_APPROVE", "VERITY_DENY", "VERITY_NOT_ME"])
            #expect(actions.map(\.requiresUnlock) == [true, false, true])
            #expect(actions[0].opensApp == (category == VerityNotificationCategory.userVerification))
        }
        var challenge = Fixture.challenge()
        #expect(VerityNotificationCategory.category(for: challenge) == "VERITY_CHALLENGE")
        challenge.userVerification = .required
        #expect(VerityNotificationCategory.category(for: challenge) == "VERITY_CHALLENGE_UV")
    }

    @Test("the service extension's content is the fetched, checked challenge; one that does not check out gets none")
    func serviceExtensionContent() async throws {
        let harness = try Harness()
        _ = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Fixture.challenge()))
        let notification = try PushChallengeNotification(payload: Self.userInfo)
        let content = try await harness.push.notificationContent(for: notification)
        #expect(content.body == "Sign in to Example on a new computer?\nLocation: Berlin\nIP: ::1")
        #expect(content.categoryIdentifier == "VERITY_CHALLENGE")

        await harness.transport.enqueue(
            try Fixture.json(Fixture.challenge(contentHash: String(repeating: "A", count: 43))))
        await #expect(throws: VerityKitError.self) { try await harness.push.notificationContent(for: notification) }
        #expect(ChallengeNotificationContent.unverified.categoryIdentifier.isEmpty)
        // Fetching is all it does: nothing was answered.
        #expect(await harness.transport.requests.allSatisfy { $0.method != .post || !$0.url.path.hasSuffix("respond") })
    }

    @Test("amr says what the owner did: the biometry for biometrics alone, the passcode otherwise")
    func amr() {
        #expect(VerifiedPolicy.biometrics(.faceID).method == .face)
        #expect(VerifiedPolicy.biometrics(.touchID).method == .fpt)
        #expect(VerifiedPolicy.biometrics(.opticID).method == .iris)
        #expect(VerifiedPolicy.passcodeOrBiometrics.method == .pin)
    }

    @Test(
        "a cancelled or failed prompt approves a preferred challenge only on the app's explicit approve",
        arguments: [UserVerificationOutcome.cancelled, .failed])
    func failedPromptApprovesNothing(outcome: UserVerificationOutcome) async throws {
        let keychain = RecordingKeychain()
        let phone = try KeychainQueryTests.Phone(keychain: keychain, outcomes: [outcome, outcome])
        let factor = try await phone.enroll(withUserVerification: true)
        await phone.transport.enqueue(try Fixture.json(Fixture.challenge()))
        await #expect(throws: VerityKitError.userVerification(outcome.result)) {
            try await phone.push.approve(challengeId: Fixture.challengeId, factorId: factor.id)
        }
        #expect(await phone.transport.requests.count == 3)  // enroll, verify, fetch: no answer

        await phone.transport.enqueue(try Fixture.json(Fixture.challenge()))
        await phone.transport.enqueue(try Fixture.json(Fixture.challenge(status: .approved)))
        let resolution = try await phone.push.resolve(challengeId: Fixture.challengeId, factorId: factor.id) { step in
            if case .userVerification = step { return .proceed }
            return .approve
        }
        #expect(resolution.outcome == .approved(.proofOfPossession))
        let body = try decodeBody(RespondChallengeRequest.self, of: try #require(await phone.transport.requests.last))
        #expect(body.keyType == nil)
    }

    @Test("two instances over one store keep apart with their own namespaces")
    func namespaces() async throws {
        let store = InMemorySecureStore()
        let transport = RecordingTransport()
        func push(_ namespace: String) throws -> VerityPush {
            VerityPush(
                configuration: VerityConfiguration(baseURL: try Fixture.baseURL()), transport: transport, store: store,
                installationMarker: TestInstallationMarker(present: true), storageNamespace: namespace)
        }
        let production = try push("verity.production")
        let staging = try push("verity.staging")
        await transport.enqueue(
            try Fixture.json(
                EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))
        _ = try await production.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "Phone", pushPlatform: .apns,
            pushToken: Fixture.pushToken)
        #expect(try await production.factors().count == 1)
        #expect(try await staging.factors().isEmpty)
        try await staging.clearLocalStorage()
        #expect(try await production.factors().count == 1)
        #expect(store.allItems.keys.allSatisfy { $0.hasPrefix("verity.production.") })
    }

    @Test("one call updates the push token of every factor, from the APNs token's bytes")
    func pushTokenForEveryFactor() async throws {
        let harness = try Harness()
        let (factor, _) = try await harness.enrollVerified()
        await harness.transport.enqueue(try Fixture.json(Fixture.factor(status: .verified)))
        let updated = try await harness.push.updatePushToken(Data([0x0a, 0xbc]))
        #expect(updated.map(\.pushToken) == ["0abc"])
        let patch = try await harness.request(2)
        #expect(patch.method == .patch)
        #expect(patch.url == (try Fixture.url("/v1/device/factors/\(factor.id)")))
        #expect(try decodeBody(UpdateFactorRequest.self, of: patch).pushToken == "0abc")
        // The same token again sends nothing.
        #expect(try await harness.push.updatePushToken("0abc").isEmpty)
        #expect(await harness.transport.requests.count == 3)
    }

    @Test("an apns factor tells the server its APNs environment; other platforms send none")
    func apnsEnvironment() async throws {
        for platform in [PushPlatform.apns, .none] {
            let transport = RecordingTransport()
            var configuration = VerityConfiguration(baseURL: try Fixture.baseURL())
            configuration.apnsEnvironment = .sandbox
            let push = VerityPush(
                configuration: configuration, transport: transport, store: InMemorySecureStore(),
                installationMarker: TestInstallationMarker(present: true))
            await transport.enqueue(
                try Fixture.json(
                    EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))
            _ = try await push.createFactor(
                enrollmentToken: Fixture.enrollmentToken, friendlyName: "Phone", pushPlatform: platform,
                pushToken: platform == .none ? nil : Fixture.pushToken)
            let body = try decodeBody(CreatePushFactorRequest.self, of: try #require(await transport.requests.first))
            #expect(body.apnsEnvironment == (platform == .apns ? .sandbox : nil))
        }
    }
}
