import Crypto
import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Security round 2, finding 5 and its smaller companions: a push answer obeys the same rules on every face (a
/// suspended factor approves nothing, a `required` challenge needs the user-verification key), and a backend cannot
/// set the hidden details Verity reserves for itself.
@Suite("Security round 2: one rule for push answers on every face, reserved hidden details")
struct SecurityRoundPushTests {
    let identity = "user-0001-abcd"

    // MARK: - Finding 5: the Twilio answer takes the checked path

    @Test(
        "A suspended factor approves nothing: native 403 factor_suspended, Twilio 403 20403; it stays pending",
        arguments: TestEngine.available)
    func suspendedFactor(engine: TestEngine) async throws {
        let settings = ProjectSettings(unusualActivityResponse: .suspendFactor)
        let node = try await TestNode.make(engine, settings: settings)
        let auth = try node.twilioAuth()
        try await node.run { client in
            // Native: "not me" on one challenge suspends the factor; the other one can no longer be approved.
            let device = try await TestDevice.enrolled(node: node, client: client)
            let first = try await nativeChallenge(#"{"factorId":"\#(device.factorId)"}"#, node: node, client: client)
            let second = try await nativeChallenge(#"{"factorId":"\#(device.factorId)"}"#, node: node, client: client)
            let shown = try await device.pending(client: client)
            let reported = try await device.answer(
                try #require(shown.first { $0.id == first }), .denied, reason: .notMe, client: client)
            #expect(reported.status == .ok)
            let refused = try await device.answer(
                try #require(shown.first { $0.id == second }), .approved, client: client)
            #expect(refused.status == .forbidden)
            #expect(try refused.problem().code == "factor_suspended")
            #expect(try await status(of: second, node: node, client: client) == .pending)

            // Twilio: the same device key speaks both protocols; "not me" natively, then a Twilio approval.
            let service = try await client.twilioService(auth: auth)
            let phone = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client)
            let native = try phone.native()
            let twilioFirst = try await twilioChallenge(phone, auth: auth, client: client)
            let twilioSecond = try await twilioChallenge(phone, auth: auth, client: client)
            let view = try #require(
                try await native.pending(client: client).first { $0.id == Self.verityId(twilioFirst) })
            #expect(try await native.answer(view, .denied, reason: .notMe, client: client).status == .ok)
            let approved = try await phone.answer(twilioSecond, "approved", client: client)
            #expect(approved.status == .forbidden)
            #expect(try approved.json()["code"] as? Int == 20403)
            #expect(try await status(of: Self.verityId(twilioSecond), node: node, client: client) == .pending)
        }
    }

    @Test(
        "A `required` challenge refuses the silent key: native 403 user_verification_required, Twilio 403 20403",
        arguments: TestEngine.available)
    func userVerificationRequired(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            try await device.addUserVerificationKey(userId: "user-1", node: node, client: client)
            let required = try await nativeChallenge(
                #"{"factorId":"\#(device.factorId)","userVerification":"required"}"#, node: node, client: client)
            let shown = try #require(try await device.pending(client: client).first { $0.id == required })
            let refused = try await device.answer(shown, .approved, client: client)
            #expect(refused.status == .forbidden)
            #expect(try refused.problem().code == "user_verification_required")
            #expect(try await status(of: required, node: node, client: client) == .pending)

            // A Twilio factor that also holds a user-verification key gets a `required` challenge; the Twilio
            // protocol signs with the one device key, the silent one.
            let service = try await client.twilioService(auth: auth)
            let phone = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client)
            let native = try phone.native()
            try await native.addUserVerificationKey(userId: identity, node: node, client: client)
            let challenge = try await nativeChallenge(
                #"{"factorId":"\#(native.factorId)","userVerification":"required"}"#, node: node, client: client)
            let sid = try #require(TwilioSID.sid("YC", verityId: challenge))
            let approved = try await phone.answer(sid, "approved", client: client)
            #expect(approved.status == .forbidden)
            #expect(try approved.json()["code"] as? Int == 20403)
            #expect(try await status(of: challenge, node: node, client: client) == .pending)
            // Denying needs no proof of the owner.
            #expect(try await phone.answer(sid, "denied", client: client).status == .ok)
            #expect(try await status(of: challenge, node: node, client: client) == .denied)
        }
    }

    // MARK: - Finding 6: reserved hidden details

    @Test(
        "A backend cannot set a reserved hidden detail (verity.…): native 400 invalid_request, Twilio 400 60200",
        arguments: TestEngine.available)
    func reservedHiddenDetails(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            for key in [AuthService.stepUpSessionDetail, "Verity.StepUpSession", "verity.other"] {
                let refused = try await client.createChallenge(
                    #"{"factorId":"\#(device.factorId)","hiddenDetails":{"\#(key)":"ses_x"}}"#, key: node.apiKey)
                #expect(refused.status == .badRequest)
                #expect(try refused.problem().code == "invalid_request")
            }
            let service = try await client.twilioService(auth: auth)
            let phone = try await TwilioTestDevice.enroll(
                identity, service: service, auth: auth, node: node, client: client)
            let refused = try await client.twilio(
                .post, phone.path("/Challenges"), auth: auth,
                form: [
                    "FactorSid": phone.factorSid, "Details.Message": "Approve?",
                    "HiddenDetails": #"{"\#(AuthService.stepUpSessionDetail)":"ses_x"}"#,
                ])
            #expect(refused.status == .badRequest)
            #expect(try refused.json()["code"] as? Int == 60200)
            // Nothing was created or pushed.
            #expect(try await device.pending(client: client).isEmpty)
            #expect(node.sender.pushes.isEmpty)
        }
    }

    // MARK: - Finding 6: test numbers in a possession flow only when the backend allows them

    @Test(
        "A flow whose backend named no number runs a test number as an ordinary one, unless it allowTestNumbers",
        arguments: TestEngine.available)
    func possessionTestNumbers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let number = "+16505551237"
            let added = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"\#(number)","code":"123456"}"#)
            #expect(added.status.code < 300)
            let asked = #"{"phoneNumber":"\#(number)"}"#

            // Desktop: the link is really sent, and nothing succeeds until it is opened.
            let desktop = try await TestFlow.start(#"{"flow":"desktop"}"#, node: node, client: client)
            let linked = try await desktop.step("link/start", json: asked, client: client)
            #expect(try linked.decode(PossessionState.self).status == .linkSent)
            _ = try await node.sender.waitForMessages(to: number)
            let pending = try await desktop.validate(client: client)
            #expect(!pending.success && pending.reason == "pending" && !pending.testNumber)

            // Mobile: the fixed code is just a wrong code; the real one was sent.
            let mobile = try await TestFlow.start(#"{"flow":"mobile"}"#, node: node, client: client)
            #expect(try await mobile.step("otp/start", json: asked, client: client).status == .ok)
            let wrong = try await mobile.step("otp/finish", json: #"{"code":"123456"}"#, client: client)
            #expect(wrong.status == .unauthorized)
            #expect(try wrong.problem().code == "wrong_code")
            _ = try await node.sender.waitForMessages(to: number, count: 2)
            #expect(try await !mobile.validate(client: client).success)

            // A backend that allows test numbers gets the test-number flow, said so at validate.
            let allowed = try await TestFlow.start(
                #"{"flow":"desktop","allowTestNumbers":true}"#, node: node, client: client)
            let opened = try await allowed.step("link/start", json: asked, client: client)
            #expect(try opened.decode(PossessionState.self).status == .succeeded)
            let validation = try await allowed.validate(client: client)
            #expect(validation.success && validation.testNumber)
            #expect(node.sender.messages(to: number).count == 2)
        }
    }

    // MARK: - Finding 6: the user-verification key changes only with the owner

    @Test(
        "The silent key alone neither adds nor replaces the user-verification key (403); a token or the old key does",
        arguments: TestEngine.available)
    func userVerificationKeyChanges(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let device = try await TestDevice.enrolled(node: node, client: client)
            let first = P256.Signing.PrivateKey()
            let second = P256.Signing.PrivateKey()
            let refused = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(publicKey: first.publicKey.derBase64), client: client)
            #expect(refused.status == .forbidden)
            #expect(try refused.problem().code == "user_verification_required")
            #expect(try await hasUserVerificationKey(device, node: node, client: client) == false)

            // A fresh enrollment token from the backend adds it, once.
            let token = try await device.enrollmentToken(userId: "user-1", node: node, client: client)
            let added = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(publicKey: first.publicKey.derBase64, enrollmentToken: token),
                client: client)
            #expect(added.status == .ok)
            let spent = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(publicKey: second.publicKey.derBase64, enrollmentToken: token),
                client: client)
            #expect(spent.status == .unauthorized)

            // Replacing it: not by the silent key, nor by a proof the silent key signed; by the old key, yes.
            let silent = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(publicKey: second.publicKey.derBase64), client: client)
            #expect(try silent.problem().code == "user_verification_required")
            let proof = UserVerificationKeyProof(factorId: device.factorId, publicKey: second.publicKey.derBase64)
            let forged = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(
                    publicKey: second.publicKey.derBase64, proof: try Self.sign(proof, with: device.key)),
                client: client)
            #expect(try forged.problem().code == "user_verification_required")
            // The first key is still the one: it approves a `required` challenge.
            try await approveRequired(device, with: first, node: node, client: client)

            let replaced = try await device.setUserVerificationKey(
                SetUserVerificationKeyRequest(
                    publicKey: second.publicKey.derBase64, proof: try Self.sign(proof, with: first)),
                client: client)
            #expect(replaced.status == .ok)
            try await approveRequired(device, with: second, node: node, client: client)
        }
    }

    private static func sign(_ proof: UserVerificationKeyProof, with key: P256.Signing.PrivateKey) throws -> String {
        try CompactJWS.sign(
            payload: Array(try JSONEncoder().encode(proof)), keyID: proof.factorId,
            type: UserVerificationKeyProof.tokenType, using: key)
    }

    private func hasUserVerificationKey(_ device: TestDevice, node: TestNode, client: some TestClientProtocol)
        async throws -> Bool?
    {
        try await client.send(.get, "/v1/users/user-1/factors", key: node.apiKey).decode(Page<Factor>.self).items
            .first { $0.id == device.factorId }?.hasUserVerificationKey
    }

    /// A `required` challenge to the device, approved with `key` as its user-verification key.
    private func approveRequired(
        _ device: TestDevice, with key: P256.Signing.PrivateKey, node: TestNode, client: some TestClientProtocol
    ) async throws {
        let id = try await nativeChallenge(
            #"{"factorId":"\#(device.factorId)","userVerification":"required"}"#, node: node, client: client)
        let shown = try #require(try await device.pending(client: client).first { $0.id == id })
        let payload = ChallengeSigningPayload(
            challengeId: id, factorId: device.factorId, contentHash: shown.contentHash, status: .approved,
            keyType: .userVerification)
        let answered = try await device.respond(
            challengeId: id, status: .approved, keyType: .userVerification,
            signature: try payload.sign(using: key, keyID: device.factorId), client: client)
        #expect(answered.status == .ok)
        #expect(try await status(of: id, node: node, client: client) == .approved)
    }

    // MARK: - Helpers

    static func verityId(_ challengeSid: String) -> String {
        TwilioSID.verityId(challengeSid, prefix: "YC", idPrefix: "chl") ?? ""
    }

    private func nativeChallenge(_ json: String, node: TestNode, client: some TestClientProtocol) async throws
        -> String
    {
        let created = try await client.createChallenge(json, key: node.apiKey)
        #expect(created.status == .created)
        return try created.decode(Challenge.self).id
    }

    private func twilioChallenge(_ phone: TwilioTestDevice, auth: TwilioAuth, client: some TestClientProtocol)
        async throws -> String
    {
        let created = try await client.twilio(
            .post, phone.path("/Challenges"), auth: auth,
            form: ["FactorSid": phone.factorSid, "Details.Message": "Approve sign-in?"])
        #expect(created.status == .created)
        return try #require(try created.json()["sid"] as? String)
    }

    private func status(of challengeId: String, node: TestNode, client: some TestClientProtocol) async throws
        -> ChallengeStatus
    {
        try await client.send(.get, "/v1/challenges/\(challengeId)", key: node.apiKey).decode(Challenge.self).status
    }
}

extension TwilioTestDevice {
    /// The same phone speaking the native device protocol: its key, its factor's Verity id.
    func native() throws -> TestDevice {
        TestDevice(
            clock: clock, key: key,
            factorId: try #require(TwilioSID.verityId(factorSid, prefix: "YF", idPrefix: "fac")))
    }
}

extension TestDevice {
    /// Answers with the proof-of-possession key, with a signed deny `reason`.
    func answer(
        _ challenge: DeviceChallenge, _ status: ChallengeAnswer, reason: DenyReason?, client: some TestClientProtocol
    ) async throws -> TestResponse {
        let payload = ChallengeSigningPayload(
            challengeId: challenge.id, factorId: factorId, contentHash: challenge.contentHash, status: status,
            reason: reason)
        return try await client.send(
            .post, "/v1/device/factors/\(factorId)/challenges/\(challenge.id)/respond", key: try token(),
            json: try Self.json(
                RespondChallengeRequest(signed: payload, signature: try payload.sign(using: key, keyID: factorId))))
    }

    /// Gives the factor a user-verification key (one this test never uses), with a fresh enrollment token from the
    /// backend for `userId`.
    func addUserVerificationKey(userId: String, node: TestNode, client: some TestClientProtocol) async throws {
        let set = try await setUserVerificationKey(
            SetUserVerificationKeyRequest(
                publicKey: P256.Signing.PrivateKey().publicKey.derBase64,
                enrollmentToken: try await enrollmentToken(userId: userId, node: node, client: client)),
            client: client)
        #expect(set.status == .ok)
    }

    func setUserVerificationKey(_ request: SetUserVerificationKeyRequest, client: some TestClientProtocol)
        async throws -> TestResponse
    {
        try await client.send(
            .put, "/v1/device/factors/\(factorId)/user-verification-key", key: try token(), json: try Self.json(request)
        )
    }
}
