import Crypto
import Foundation
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

/// A phone for server tests: a real P-256 key that enrolls over HTTP and signs device tokens and answers.
struct TestDevice: Sendable {
    let key: P256.Signing.PrivateKey
    let clock: TestClock
    var factorId = ""

    /// A new phone, or one that already holds `key` for the factor `factorId` (a Twilio face's device speaking the
    /// native protocol too).
    init(clock: TestClock, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), factorId: String = "") {
        self.clock = clock
        self.key = key
        self.factorId = factorId
    }

    /// Enrolls and verifies a push factor for `userId`; returns the device with its factor id.
    static func enrolled(
        userId: String = "user-1", node: TestNode, client: some TestClientProtocol, platform: PushPlatform = .apns
    ) async throws -> TestDevice {
        var device = TestDevice(clock: node.clock)
        let token = try await device.enrollmentToken(userId: userId, node: node, client: client)
        let enrolled = try await device.enroll(token: token, client: client, platform: platform)
        #expect(enrolled.status == .created)
        let body = try enrolled.decode(EnrolledPushFactor.self)
        device.factorId = body.factor.id
        let verified = try await device.verify(token: token, nonce: body.nonce, client: client)
        #expect(verified.status == .ok)
        return device
    }

    func enrollmentToken(userId: String, node: TestNode, client: some TestClientProtocol) async throws -> String {
        let response = try await client.send(
            .post, "/v1/enrollment-tokens", key: node.apiKey, json: #"{"userId":"\#(userId)"}"#)
        #expect(response.status == .created)
        return try response.decode(EnrollmentToken.self).token
    }

    func enroll(
        token: String, client: some TestClientProtocol, platform: PushPlatform = .apns,
        metadata: [String: String]? = nil
    ) async throws -> TestResponse {
        let body = CreatePushFactorRequest(
            publicKey: key.publicKey.derBase64, friendlyName: "Test phone", pushPlatform: platform,
            pushToken: platform == .none ? nil : "a1b2c3d4", appId: "com.example.app", sdkVersion: "test",
            metadata: metadata)
        return try await client.send(.post, "/v1/device/factors", key: token, json: try Self.json(body))
    }

    func verify(token: String, nonce: String, client: some TestClientProtocol) async throws -> TestResponse {
        let proof = try CompactJWS.sign(
            payload: Array(try JSONEncoder().encode(FactorProof(factorId: factorId, nonce: nonce))), keyID: factorId,
            using: key)
        return try await client.send(
            .post, "/v1/device/factors/\(factorId)/verify", key: token,
            json: try Self.json(VerifyPushFactorRequest(signature: proof)))
    }

    /// A fresh device token on the test clock.
    func token(lifetime: Int = 300, issuedAt: Date? = nil, jti: String = UUID().uuidString, subject: String? = nil)
        throws -> String
    {
        let iat = Int((issuedAt ?? clock.now()).timeIntervalSince1970)
        let claims = DeviceTokenClaims(sub: subject ?? factorId, iat: iat, exp: iat + lifetime, jti: jti)
        return try CompactJWS.sign(payload: Array(try JSONEncoder().encode(claims)), keyID: factorId, using: key)
    }

    func pending(client: some TestClientProtocol) async throws -> [DeviceChallenge] {
        let response = try await client.send(
            .get, "/v1/device/factors/\(factorId)/challenges?status=pending", key: try token())
        #expect(response.status == .ok)
        return try response.decode(Page<DeviceChallenge>.self).items
    }

    func answer(
        _ challenge: DeviceChallenge, _ status: ChallengeAnswer, client: some TestClientProtocol,
        signingAs factorIdForSignature: String? = nil
    ) async throws -> TestResponse {
        let payload = ChallengeSigningPayload(
            challengeId: challenge.id, factorId: factorIdForSignature ?? factorId, contentHash: challenge.contentHash,
            status: status)
        let signature = try payload.sign(using: key, keyID: factorId)
        return try await respond(challengeId: challenge.id, status: status, signature: signature, client: client)
    }

    func respond(
        challengeId: String, status: ChallengeAnswer, keyType: FactorKeyType? = nil, signature: String,
        client: some TestClientProtocol
    ) async throws -> TestResponse {
        try await client.send(
            .post, "/v1/device/factors/\(factorId)/challenges/\(challengeId)/respond", key: try token(),
            json: try Self.json(RespondChallengeRequest(status: status, signature: signature, keyType: keyType)))
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }
}

extension TestClientProtocol {
    func createChallenge(_ json: String, key: String) async throws -> TestResponse {
        try await send(.post, "/v1/challenges", key: key, json: json)
    }
}

extension TestNode {
    /// Enrolls a device, challenges it and approves the challenge: a `challenge.approved` event is queued for the
    /// project's webhook.
    func approveOneChallenge(client: some TestClientProtocol) async throws {
        let device = try await TestDevice.enrolled(node: self, client: client)
        _ = try await client.createChallenge(#"{"factorId":"\#(device.factorId)"}"#, key: apiKey)
        let shown = try #require(try await device.pending(client: client).first)
        _ = try await device.answer(shown, .approved, client: client)
    }

    /// Waits until a webhook event was delivered.
    func webhookDelivered() async throws {
        try await waitUntil {
            try await verity.outbox.messages().contains { $0.message.channel == .webhook && $0.message.status == .sent }
        }
    }
}
