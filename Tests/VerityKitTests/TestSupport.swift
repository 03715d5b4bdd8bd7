import Crypto
import Foundation
import Testing
import VerityCore
import VerityKit

/// A ``Transport`` that records every request and answers with scripted responses, in order.
actor RecordingTransport: Transport {
    private(set) var requests: [TransportRequest] = []
    private var responses: [Result<TransportResponse, any Error>] = []

    struct ScriptExhausted: Error {}

    func enqueue(_ response: TransportResponse) {
        responses.append(.success(response))
    }

    func enqueue(failure: any Error) {
        responses.append(.failure(failure))
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        requests.append(request)
        guard !responses.isEmpty else { throw ScriptExhausted() }
        return try responses.removeFirst().get()
    }
}

/// Collects log messages.
// @unchecked Sendable: `messages` is only touched while holding `lock`.
final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    var all: [String] { lock.withLock { messages } }

    var logger: VerityLogger {
        VerityLogger(minimumLevel: .debug) { level, message in
            self.lock.withLock { self.messages.append("\(level): \(message)") }
        }
    }
}

/// An ``InstallationMarker`` in memory.
// @unchecked Sendable: `present` is only touched while holding `lock`.
final class TestInstallationMarker: InstallationMarker, @unchecked Sendable {
    private let lock = NSLock()
    private var present: Bool

    init(present: Bool) {
        self.present = present
    }

    var isPresent: Bool { lock.withLock { present } }

    func setPresent() {
        lock.withLock { present = true }
    }
}

enum Fixture {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let enrollmentToken = "vet_enrollment-secret"
    static let pushToken = "apns-device-token-0123"
    static let factorId = "fac_0123456789"
    static let nonce = "nonce-4242"
    static let challengeId = "chl_abcdef"

    static func baseURL() throws -> URL {
        try #require(URL(string: "https://verity.test"))
    }

    static func url(_ path: String) throws -> URL {
        try #require(URL(string: "https://verity.test\(path)"))
    }

    static func factor(status: FactorStatus, friendlyName: String = "Ada's phone") -> Factor {
        Factor(
            id: factorId, userId: "user-1", type: .push, status: status, friendlyName: friendlyName,
            pushPlatform: .apns, appId: "com.example.app", sdkVersion: VerityConfiguration.sdkVersion,
            createdAt: now, verifiedAt: status == .verified ? now : nil)
    }

    static func challenge(
        id: String = challengeId, status: ChallengeStatus = .pending, contentHash: String? = nil
    ) -> DeviceChallenge {
        let message = "Sign in to Example on a new computer?"
        let details = [ChallengeDetail(label: "Location", value: "Berlin"), ChallengeDetail(label: "IP", value: "::1")]
        let hash =
            contentHash
            ?? ChallengeSigningPayload.contentHash(message: message, details: details.map { ($0.label, $0.value) })
        return DeviceChallenge(
            id: id, factorId: factorId, status: status, message: message, details: details,
            userVerification: .preferred, createdAt: now, expiresAt: now.addingTimeInterval(300), contentHash: hash,
            signedFields: ChallengeSigningPayload.signedFields)
    }

    static func json(_ value: some Encodable, status: Int = 200, headers: [String: String] = [:]) throws
        -> TransportResponse
    {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        var headers = headers
        headers["Content-Type"] = "application/json"
        return TransportResponse(status: status, headers: headers, body: try encoder.encode(value))
    }

    static func problem(_ code: ErrorCode, headers: [String: String] = [:]) throws -> TransportResponse {
        var response = try json(Problem(code: code, detail: "scripted"), status: code.httpStatus, headers: headers)
        response.headers["Content-Type"] = "application/problem+json"
        return response
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// A ``VerityPush`` wired to a recording transport, an in-memory store and a fixed clock.
struct Harness {
    let transport = RecordingTransport()
    let store = InMemorySecureStore()
    let push: VerityPush

    init(logger: VerityLogger = .disabled, clock: @escaping @Sendable () -> Date = { Fixture.now }) throws {
        push = VerityPush(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL(), appId: "com.example.app"),
            transport: transport, store: store, logger: logger, clock: clock,
            installationMarker: TestInstallationMarker(present: true))
    }

    /// Enrolls and verifies a factor, returning it and the public key it registered.
    func enrollVerified() async throws -> (factor: PushFactor, key: P256.Signing.PublicKey) {
        await transport.enqueue(
            try Fixture.json(
                EnrolledPushFactor(factor: Fixture.factor(status: .unverified), nonce: Fixture.nonce), status: 201))
        await transport.enqueue(try Fixture.json(Fixture.factor(status: .verified)))
        _ = try await push.createFactor(
            enrollmentToken: Fixture.enrollmentToken, friendlyName: "Ada's phone", pushPlatform: .apns,
            pushToken: Fixture.pushToken)
        let factor = try await push.verifyFactor(Fixture.factorId)
        let enrollment = try #require(await transport.requests.first)
        let body = try JSONDecoder().decode(CreatePushFactorRequest.self, from: try #require(enrollment.body))
        return (factor, try P256.Signing.PublicKey(derBase64: body.publicKey))
    }

    func request(_ index: Int) async throws -> TransportRequest {
        let requests = await transport.requests
        try #require(requests.indices.contains(index), "request \(index) was not sent")
        return requests[index]
    }
}

/// Checks a device JWT the way the server does and returns its claims.
func verifiedDeviceClaims(
    _ request: TransportRequest, key: P256.Signing.PublicKey, factorId: String = Fixture.factorId
) throws -> DeviceTokenClaims {
    let authorization = try #require(request.value(forHeader: "Authorization"))
    try #require(authorization.hasPrefix("Bearer "))
    let jws = try CompactJWS(parsing: String(authorization.dropFirst("Bearer ".count)))
    #expect(jws.isValidSignature(for: key))
    #expect(jws.header == JWSHeader(alg: "ES256", typ: "JWT", kid: factorId))
    let claims = try jws.decodePayload(DeviceTokenClaims.self)
    #expect(claims.sub == factorId)
    #expect(claims.exp - claims.iat == 300)
    let jti = try #require(Base64URL.decode(claims.jti))
    #expect(jti.count >= 16)
    return claims
}

func decodeBody<Value: Decodable>(_ type: Value.Type, of request: TransportRequest) throws -> Value {
    try JSONDecoder().decode(type, from: try #require(request.body))
}
