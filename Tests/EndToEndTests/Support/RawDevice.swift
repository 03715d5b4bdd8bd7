import Crypto
import Foundation
import VerityCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A device written by hand over HTTP, with both of its keys in the test's hands: it can sign what VerityKit never
/// would (an approval of a `required` challenge with the silent key, a denial with no signature), to show the server
/// refuses it.
struct RawDevice: Sendable {
    let baseURL: URL
    let factorId: String
    let proofOfPossession: P256.Signing.PrivateKey
    let userVerification: P256.Signing.PrivateKey

    /// An HTTP answer: its status and, for an error, its problem code.
    struct Answer {
        var status: Int
        var code: String?
        var data: Data
    }

    /// Enrolls and verifies a factor with a user-verification key for `userId`.
    static func enrolled(userId: String, on server: LiveServer) async throws -> RawDevice {
        let pop = P256.Signing.PrivateKey()
        let uv = P256.Signing.PrivateKey()
        let token = try await server.backend.enrollmentToken(userId: userId)
        let create = CreatePushFactorRequest(
            publicKey: pop.publicKey.derBase64, friendlyName: "Raw device", pushPlatform: .none,
            userVerificationKey: uv.publicKey.derBase64)
        let created = try await send(
            "POST", "v1/device/factors", base: server.baseURL, body: try JSONEncoder().encode(create), bearer: token)
        let enrolled = try decoder.decode(EnrolledPushFactor.self, from: created.data)
        let proof = try CompactJWS.sign(
            payload: Array(try JSONEncoder().encode(FactorProof(factorId: enrolled.factor.id, nonce: enrolled.nonce))),
            keyID: enrolled.factor.id, type: "JWT", using: pop)
        let verified = try await send(
            "POST", "v1/device/factors/\(enrolled.factor.id)/verify", base: server.baseURL,
            body: try JSONEncoder().encode(VerifyPushFactorRequest(signature: proof)), bearer: token)
        guard verified.status == 200 else { throw Refused(answer: verified) }
        return RawDevice(
            baseURL: server.baseURL, factorId: enrolled.factor.id, proofOfPossession: pop, userVerification: uv)
    }

    struct Refused: Error {
        let answer: Answer
    }

    func challenge(_ id: String) async throws -> DeviceChallenge {
        let answer = try await signed("GET", "v1/device/factors/\(factorId)/challenges/\(id)")
        guard answer.status == 200 else { throw Refused(answer: answer) }
        return try Self.decoder.decode(DeviceChallenge.self, from: answer.data)
    }

    /// Posts `request` as the answer to `challengeId`.
    func respond(_ challengeId: String, _ request: RespondChallengeRequest) async throws -> Answer {
        try await signed(
            "POST", "v1/device/factors/\(factorId)/challenges/\(challengeId)/respond",
            body: try JSONEncoder().encode(request))
    }

    /// Signs `payload` with the key of `keyType` and posts it with what it states.
    func answer(_ payload: ChallengeSigningPayload, signingWith keyType: FactorKeyType) async throws -> Answer {
        let key = keyType == .userVerification ? userVerification : proofOfPossession
        let signature = try payload.sign(using: key, keyID: factorId)
        return try await respond(payload.challengeId, RespondChallengeRequest(signed: payload, signature: signature))
    }

    /// A request authenticated by a fresh device token signed with the silent key.
    func signed(_ method: String, _ path: String, body: Data? = nil) async throws -> Answer {
        let now = Int(Date().timeIntervalSince1970)
        let claims = DeviceTokenClaims(sub: factorId, iat: now, exp: now + 300, jti: UUID().uuidString)
        let token = try CompactJWS.sign(
            payload: Array(try JSONEncoder().encode(claims)), keyID: factorId, type: "JWT", using: proofOfPossession)
        return try await Self.send(method, path, base: baseURL, body: body, bearer: token)
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    static func send(_ method: String, _ path: String, base: URL, body: Data?, bearer: String) async throws -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path, isDirectory: false))
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return Answer(status: status, code: try? JSONDecoder().decode(Problem.self, from: data).code, data: data)
    }
}
