import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit
import VerityTestSupport

@testable import VerityServer

/// Device trust against a live server: the user-verification key the server can require, the remediation steps,
/// "this wasn't me" with each project response, approving from a notification extension that shares the app's
/// store, and what the server refuses (a tampered context, an unsigned denial).
@Suite("Device trust end to end")
struct DeviceTrustEndToEndTests {
    /// A phone whose app enrolled with a user-verification key and whose "biometric prompt" plays `verifier`.
    static func phone(
        userId: String, on server: LiveServer, verifier: ScriptedUserVerifier, withUserVerification: Bool = true,
        store: any SecureStore = InMemorySecureStore()
    ) async throws -> (push: VerityPush, factorId: String) {
        let push = VerityPush(
            configuration: VerityConfiguration(baseURL: server.baseURL, appId: "com.example.app"),
            transport: URLSessionTransport(), store: store, userVerifier: verifier,
            // Linux has no Secure Enclave: the user-verification key is a software one, which needs the switch.
            allowsSoftwareUserVerificationKeysForTesting: true)
        let token = try await server.backend.enrollmentToken(userId: userId)
        let factor = try await push.createFactor(
            enrollmentToken: token, friendlyName: "Phone of \(userId)", pushPlatform: .apns, pushToken: "a1b2c3d4",
            withUserVerification: withUserVerification)
        #expect(factor.hasUserVerificationKey == withUserVerification)
        _ = try await push.verifyFactor(factor.id)
        return (push, factor.id)
    }

    static let webhookURL = "https://hooks.example.com/verity"

    /// The events queued for the project's webhook.
    static func webhookPayloads(_ server: LiveServer) async throws -> [String] {
        try await server.verity.outbox.messages(destination: webhookURL).compactMap(\.message.payload)
    }

    @Test(
        "A required challenge is refused with the silent key and approved with the user-verification key",
        arguments: TestEngine.available)
    func requiredNeedsUserVerification(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let device = try await RawDevice.enrolled(userId: "user-1", on: server)
            #expect(try await server.backend.factor(id: device.factorId).hasUserVerificationKey == true)
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(factorId: device.factorId, userVerification: .required))
            let shown = try await device.challenge(created.id)
            let approval = ChallengeSigningPayload(
                challengeId: created.id, factorId: device.factorId, contentHash: shown.contentHash, status: .approved)

            let silent = try await device.answer(approval, signingWith: .proofOfPossession)
            #expect(silent.status == 403)
            #expect(silent.code == ErrorCode.userVerificationRequired.rawValue)
            // Claiming the user-verification key while signing with the silent one does not pass either.
            var claimed = approval
            claimed.keyType = .userVerification
            claimed.amr = [.face]
            let forged = try await device.answer(claimed, signingWith: .proofOfPossession)
            #expect(forged.status == 400)
            #expect(forged.code == ErrorCode.invalidSignature.rawValue)
            #expect(try await server.backend.challenge(id: created.id).status == .pending)

            let verified = try await device.answer(claimed, signingWith: .userVerification)
            #expect(verified.status == 200)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.keyType == .userVerification)
            #expect(seen.amr == [.face])
        }
    }

    @Test(
        "VerityKit approves a required challenge after the prompt; the backend sees key and amr",
        arguments: TestEngine.available)
    func verityKitApprovesWithUserVerification(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            _ = try await server.verity.admin.setWebhook(projectId: server.projectId, url: Self.webhookURL)
            let verifier = ScriptedUserVerifier([.verified(.fpt)])
            let phone = try await Self.phone(userId: "user-1", on: server, verifier: verifier)
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(userId: "user-1", message: "Pay 20 EUR?", userVerification: .required))
            let answered = try await phone.push.approve(challengeId: created.id, factorId: phone.factorId)
            #expect(answered.status == .approved)
            #expect(verifier.prompts == ["Pay 20 EUR?"])
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.keyType == .userVerification)
            #expect(seen.amr == [.fpt])
            #expect(seen.userVerificationResult == .verified)
            // The webhook says the same.
            let hooks = try await Self.webhookPayloads(server)
            let approved = try #require(hooks.first { $0.contains("challenge.approved") })
            #expect(approved.contains("\"keyType\":\"userVerification\""))
            #expect(approved.contains("\"amr\":[\"fpt\"]"))

            // `discouraged` never prompts: the silent key approves.
            let quiet = try await server.backend.createChallenge(
                CreateChallengeRequest(userId: "user-1", userVerification: .discouraged))
            _ = try await phone.push.approve(challengeId: quiet.id, factorId: phone.factorId)
            #expect(verifier.prompts.count == 1)
            let seenQuiet = try await server.backend.challenge(id: quiet.id)
            #expect(seenQuiet.status == .approved)
            #expect(seenQuiet.keyType == nil)
        }
    }

    @Test(
        "The backend learns before it asks that a factor without a user-verification key cannot approve",
        arguments: TestEngine.available)
    func noUserVerificationKey(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Self.phone(
                userId: "user-1", on: server, verifier: ScriptedUserVerifier(), withUserVerification: false)
            #expect(try await server.backend.factor(id: phone.factorId).hasUserVerificationKey == false)
            let refused = await #expect(throws: Backend.UnexpectedResponse.self) {
                try await server.backend.createChallenge(
                    CreateChallengeRequest(factorId: phone.factorId, userVerification: .required))
            }
            #expect(refused?.status == 403)
            #expect(refused?.body.contains("user_verification_required") == true)

            // Added later with a fresh enrollment token from the backend (the silent key alone is not the owner).
            let upgraded = try await phone.push.addUserVerificationKey(
                factorId: phone.factorId, enrollmentToken: try await server.backend.enrollmentToken(userId: "user-1"))
            #expect(upgraded.hasUserVerificationKey)
            #expect(try await server.backend.factor(id: phone.factorId).hasUserVerificationKey == true)
            _ = try await server.backend.createChallenge(
                CreateChallengeRequest(factorId: phone.factorId, userVerification: .required))
            // And removed the same way.
            #expect(
                try await phone.push.removeUserVerificationKey(factorId: phone.factorId).hasUserVerificationKey == false
            )
            #expect(try await server.backend.factor(id: phone.factorId).hasUserVerificationKey == false)
        }
    }

    @Test(
        "A cancelled prompt is reported; the app leaves the challenge pending or denies it",
        arguments: TestEngine.available)
    func cancelledPrompt(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let verifier = ScriptedUserVerifier([.cancelled, .cancelled, .cancelled])
            let phone = try await Self.phone(userId: "user-1", on: server, verifier: verifier)
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(userId: "user-1", userVerification: .required))

            // The one-call approve never downgrades a required challenge.
            let refused = await #expect(throws: VerityKitError.self) {
                try await phone.push.approve(challengeId: created.id, factorId: phone.factorId)
            }
            #expect(refused == .userVerification(.cancelled))
            #expect(try await server.backend.challenge(id: created.id).status == .pending)

            // Steps: consent, the prompt, then the message saying it was cancelled; the app keeps it pending.
            let kept = try await phone.push.resolve(challengeId: created.id, factorId: phone.factorId) { step in
                if case .consent = step { return .approve }
                if case .message = step { return .noDecision }
                return .proceed
            }
            #expect(kept.outcome == .pending)
            #expect(kept.userVerificationResult == .cancelled)
            #expect(kept.steps.count == 3)
            #expect(kept.steps.last == .message(.userVerificationFailed(.cancelled)))
            #expect(try await server.backend.challenge(id: created.id).status == .pending)

            // This time the app denies; the denial is signed and says why.
            let denied = try await phone.push.resolve(challengeId: created.id, factorId: phone.factorId) { step in
                switch step {
                case .consent: return .approve
                case .userVerification: return .proceed
                case .message: return .deny(reason: nil)
                }
            }
            #expect(denied.outcome == .denied(nil))
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .denied)
            #expect(seen.userVerificationResult == .cancelled)
            #expect(seen.reason == nil)
        }
    }

    @Test(
        "A failed prompt approves a preferred challenge only when the app says so explicitly, and the answer says so",
        arguments: TestEngine.available)
    func preferredFallsBack(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Self.phone(
                userId: "user-1", on: server, verifier: ScriptedUserVerifier([.failed, .failed]))
            let created = try await server.backend.createChallenge(CreateChallengeRequest(userId: "user-1"))
            #expect(created.userVerification == .preferred)
            // approve(…) goes on after the prompt only when the device cannot verify: a failed prompt approves nothing.
            await #expect(throws: VerityKitError.userVerification(.failed)) {
                try await phone.push.approve(challengeId: created.id, factorId: phone.factorId)
            }
            #expect(try await server.backend.challenge(id: created.id).status == .pending)
            // The app's explicit `.approve` after the message approves with the silent key.
            _ = try await phone.push.resolve(challengeId: created.id, factorId: phone.factorId) { step in
                if case .userVerification = step { return .proceed }
                return .approve
            }
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.keyType == nil)
            #expect(seen.userVerificationResult == .failed)
        }
    }

    @Test(
        "\"This wasn't me\": the security event, the webhook and the project's response",
        arguments: TestEngine.available, UnusualActivityResponse.allCases)
    func notMe(engine: TestEngine, response: UnusualActivityResponse) async throws {
        try await LiveServer.run(engine) { server in
            let project = try await server.backend.updateProject(
                UpdateProjectRequest(unusualActivityResponse: response))
            #expect(project.unusualActivityResponse == response)
            _ = try await server.verity.admin.setWebhook(projectId: server.projectId, url: Self.webhookURL)
            // A Verity user, signed in on another app, who also enrolled a phone.
            let app = SessionEndToEndTests.app(server)
            let session = try await SessionEndToEndTests.signIn(app, "+14155550177", server: server)
            let userId = session.user.id
            let phone = try await Self.phone(userId: userId, on: server, verifier: ScriptedUserVerifier())
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(
                    userId: userId, context: ChallengeContext(location: "Lagos, Nigeria", app: "Acme Web")))

            let denied = try await phone.push.deny(challengeId: created.id, factorId: phone.factorId, reason: .notMe)
            #expect(denied.status == .denied)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.reason == .notMe)

            let events = try await server.backend.securityEvents(userId: userId)
            let event = try #require(events.first { $0.type == "unusual_activity_reported" })
            #expect(event.factorId == phone.factorId)
            #expect(event.challengeId == created.id)

            let hooks = try await Self.webhookPayloads(server)
            let report = try #require(hooks.first { $0.contains("security.unusual_activity_reported") })
            #expect(report.contains("\"response\":\"\(response.rawValue)\""))
            #expect(report.contains(created.id))
            #expect(hooks.contains { $0.contains("challenge.denied") })

            let refreshed = (try? await app.refresh()) != nil
            let user = try await server.backend.user(id: userId)
            let factor = try await server.backend.factor(id: phone.factorId)
            #expect(refreshed == (response == .none || response == .suspendFactor))
            #expect(user.disabled == (response == .disableUser))
            #expect((factor.suspendedAt != nil) == (response == .suspendFactor))
            if response == .suspendFactor {
                let next = await #expect(throws: Backend.UnexpectedResponse.self) {
                    try await server.backend.createChallenge(CreateChallengeRequest(factorId: phone.factorId))
                }
                #expect(next?.body.contains("factor_suspended") == true)
            }
        }
    }

    @Test(
        "A notification extension's own VerityPush, sharing the store, approves a challenge the app never saw",
        arguments: TestEngine.available)
    func extensionApproves(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let directory = ScratchSpace.root.appendingPathComponent(
                "verity-shared-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let app = try await Self.phone(
                userId: "user-1", on: server, verifier: ScriptedUserVerifier(),
                store: EncryptedFileSecureStore(directory: directory))
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(userId: "user-1", message: "Sign in on the web?"))

            // What APNs hands the extension: the payload the server queued for this factor, as the APNs sender
            // encodes it.
            let queued = try #require(
                try await server.verity.outbox.messages(destination: app.factorId).compactMap(\.message.payload).first)
            let notification = try JSONDecoder().decode(PushNotification.self, from: Data(queued.utf8))
            let userInfo = try #require(
                try JSONSerialization.jsonObject(with: Data(try APNsPushSender.payload(notification)))
                    as? [AnyHashable: Any])

            // The extension: another process, another store instance over the same directory, no app state.
            let extensionPush = VerityPush(
                configuration: VerityConfiguration(baseURL: server.baseURL, appId: "com.example.app"),
                transport: URLSessionTransport(), store: EncryptedFileSecureStore(directory: directory),
                userVerifier: ScriptedUserVerifier())
            let decision = try NotificationResponseDecision(
                actionIdentifier: VerityNotificationCategory.approveAction, userInfo: userInfo)
            let answered = try #require(try await extensionPush.respond(to: decision))
            #expect(answered.status == .approved)
            let seen = try await server.backend.challenge(id: created.id)
            #expect(seen.status == .approved)
            #expect(seen.respondedFactorId == app.factorId)
            _ = app
        }
    }

    @Test(
        "A tampered context or an unsigned denial is refused; the challenge stays pending",
        arguments: TestEngine.available)
    func tampering(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let device = try await RawDevice.enrolled(userId: "user-1", on: server)
            let created = try await server.backend.createChallenge(
                CreateChallengeRequest(
                    factorId: device.factorId, message: "Sign in?",
                    context: ChallengeContext(location: "Berlin, Germany", client: "Firefox", app: "Acme")))
            let shown = try await device.challenge(created.id)
            #expect(shown.context?.location == "Berlin, Germany")
            #expect(shown.context?.time != nil)
            #expect(
                ChallengeSigningPayload.displayedContentHash(
                    message: shown.message, details: [], context: shown.context) == shown.contentHash)

            // Someone on the way changed the place shown and the hash with it: the device signed what it saw.
            var altered = try #require(shown.context)
            altered.location = "Paris, France"
            let tamperedHash = ChallengeSigningPayload.displayedContentHash(
                message: shown.message, details: [], context: altered)
            let tampered = try await device.answer(
                ChallengeSigningPayload(
                    challengeId: created.id, factorId: device.factorId, contentHash: tamperedHash, status: .approved),
                signingWith: .proofOfPossession)
            #expect(tampered.status == 400)
            #expect(tampered.code == ErrorCode.invalidSignature.rawValue)

            // A denial without a signature, or with a reason the signature does not carry.
            let unsigned = try await device.respond(
                created.id, RespondChallengeRequest(status: .denied, signature: "", reason: .notMe))
            #expect(unsigned.status == 400)
            #expect(unsigned.code == ErrorCode.invalidSignature.rawValue)
            let plainSignature = try ChallengeSigningPayload(
                challengeId: created.id, factorId: device.factorId, contentHash: shown.contentHash, status: .denied
            ).sign(using: device.proofOfPossession, keyID: device.factorId)
            let added = try await device.respond(
                created.id, RespondChallengeRequest(status: .denied, signature: plainSignature, reason: .notMe))
            #expect(added.status == 400)
            #expect(added.code == ErrorCode.invalidSignature.rawValue)
            #expect(try await server.backend.challenge(id: created.id).status == .pending)
            #expect(try await server.backend.securityEvents(userId: "user-1").isEmpty)
        }
    }

    @Test(
        "One key cannot be both: the user-verification key must differ from the silent one",
        arguments: TestEngine.available)
    func keysDiffer(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let key = P256.Signing.PrivateKey().publicKey.derBase64
            let token = try await server.backend.enrollmentToken(userId: "user-1")
            let body = CreatePushFactorRequest(
                publicKey: key, friendlyName: "Same key", pushPlatform: .none, userVerificationKey: key)
            let refused = try await RawDevice.send(
                "POST", "v1/device/factors", base: server.baseURL, body: try JSONEncoder().encode(body), bearer: token)
            #expect(refused.status == 400)
            #expect(refused.code == ErrorCode.invalidPublicKey.rawValue)

            let device = try await RawDevice.enrolled(userId: "user-1", on: server)
            let same = try await device.signed(
                "PUT", "v1/device/factors/\(device.factorId)/user-verification-key",
                body: try JSONEncoder().encode(
                    SetUserVerificationKeyRequest(publicKey: device.proofOfPossession.publicKey.derBase64)))
            #expect(same.status == 400)
            #expect(same.code == ErrorCode.invalidPublicKey.rawValue)
        }
    }

    @Test("Bad device-trust input is a 400 with a code, and writes nothing", arguments: TestEngine.available)
    func badInput(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let device = try await RawDevice.enrolled(userId: "user-1", on: server)
            let crowded = await #expect(throws: Backend.UnexpectedResponse.self) {
                try await server.backend.createChallenge(
                    CreateChallengeRequest(
                        userId: "user-1",
                        context: ChallengeContext(textItems: Array(repeating: "line", count: 11))))
            }
            #expect(crowded?.status == 400)
            #expect(crowded?.body.contains("invalid_request") == true)

            let created = try await server.backend.createChallenge(CreateChallengeRequest(factorId: device.factorId))
            let shown = try await device.challenge(created.id)
            // A reason on an approval, and a silent answer claiming the owner verified.
            for payload in [
                ChallengeSigningPayload(
                    challengeId: created.id, factorId: device.factorId, contentHash: shown.contentHash,
                    status: .approved, reason: .notMe),
                ChallengeSigningPayload(
                    challengeId: created.id, factorId: device.factorId, contentHash: shown.contentHash,
                    status: .approved, userVerificationResult: .verified),
            ] {
                let refused = try await device.answer(payload, signingWith: .proofOfPossession)
                #expect(refused.status == 400)
                #expect(refused.code == ErrorCode.invalidRequest.rawValue)
            }
            let badProject = try await RawDevice.send(
                "PATCH", "v1/project", base: server.baseURL,
                body: Data(#"{"unusualActivityResponse": "explode"}"#.utf8), bearer: server.backend.apiKey)
            #expect(badProject.status == 400)
            #expect(try await server.backend.challenge(id: created.id).status == .pending)
            #expect(
                try await server.verity.admin.project(id: server.projectId).settings.unusualActivityResponse == .none)
        }
    }

    @Test("Key rotation: the new key, proved by the old, signs from then on", arguments: TestEngine.available)
    func rotation(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let phone = try await Self.phone(
                userId: "user-1", on: server, verifier: ScriptedUserVerifier(), withUserVerification: false)
            _ = try await phone.push.rotateKey(factorId: phone.factorId)
            let created = try await server.backend.createChallenge(CreateChallengeRequest(userId: "user-1"))
            #expect(try await phone.push.approve(challengeId: created.id, factorId: phone.factorId).status == .approved)
            _ = try await phone.push.updateFactor(phone.factorId, pushToken: "e5f6a7b8")
        }
    }
}
