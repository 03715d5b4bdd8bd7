import Foundation
import Testing
import VerityCore
import VerityKit

/// What the sign-in tests sign in with.
enum SessionFixture {
    static let projectId = "prj_0123456789"
    static let email = "ada@example.com"
    static let phoneNumber = "+14155550123"
    static let code = "246810"
    static let verificationId = "ver_0123456789"
    static let sessionId = "ses_0123456789"
    static let lifetime: TimeInterval = 900
    static let permissions = ["posts:read", "posts:write"]

    static let user = User(
        id: "usr_ada", loginIds: [email, phoneNumber], displayName: "Ada", createdAt: Fixture.now,
        lastSignInAt: Fixture.now, roles: ["editor"])

    /// The refresh token of the `generation`th answer: the sign-in is 1, each refresh adds one.
    static func refreshToken(_ generation: Int) -> String {
        "vrt_refresh-secret-\(generation)"
    }

    /// A well-formed session token whose signature is 64 arbitrary bytes: VerityKit only reads the payload.
    static func sessionJWT(
        generation: Int = 1, sessionId: String = sessionId, amr: [String] = ["otp", "email"], acr: String? = nil,
        custom: [String: JSONValue] = [:], issuedAt: Date = Fixture.now, lifetime: TimeInterval = lifetime
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string("https://verity.test/v1/projects/\(projectId)"),
            "aud": .string(projectId),
            "sub": .string(user.id),
            "iat": .integer(Int64(issuedAt.timeIntervalSince1970)),
            "exp": .integer(Int64(issuedAt.timeIntervalSince1970 + lifetime)),
            "auth_time": .integer(Int64(Fixture.now.timeIntervalSince1970)),
            "sid": .string(sessionId),
            "jti": .string("jti-\(generation)"),
            "amr": .array(amr.map(JSONValue.string)),
            "roles": .array(user.roles.map(JSONValue.string)),
            "permissions": .array(permissions.map(JSONValue.string)),
        ]
        if let acr { claims["acr"] = .string(acr) }
        claims.merge(custom) { _, new in new }
        // Sorted keys, so that the same arguments always make the same token.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try jws(payload: try encoder.encode(claims))
    }

    /// `header.payload.signature` around `payload`, with a fixed ES256 header and a signature nobody checks.
    static func jws(payload: Data) throws -> String {
        let header = Data(#"{"alg":"ES256","typ":"JWT","kid":"key-1"}"#.utf8)
        let signature = [UInt8](repeating: 0x2A, count: 64)
        return [Base64URL.encode(header), Base64URL.encode(payload), Base64URL.encode(signature)].joined(
            separator: ".")
    }

    /// A sign-in, refresh or step-up answer.
    static func auth(
        generation: Int = 1, includesRefreshToken: Bool = true, amr: [String] = ["otp", "email"], acr: String? = nil,
        custom: [String: JSONValue] = [:], issuedAt: Date = Fixture.now, user: User = user,
        lifetime: TimeInterval = lifetime
    ) throws -> AuthResponse {
        AuthResponse(
            sessionJwt: try sessionJWT(
                generation: generation, amr: amr, acr: acr, custom: custom, issuedAt: issuedAt, lifetime: lifetime),
            sessionExpiresAt: issuedAt.addingTimeInterval(lifetime),
            refreshToken: includesRefreshToken ? refreshToken(generation) : nil,
            refreshExpiresAt: issuedAt.addingTimeInterval(30 * 86_400), user: user, firstSeen: generation == 1)
    }

    static func otpStarted(sent: Bool = true, channel: Channel = .sms) -> OTPStartResponse {
        OTPStartResponse(
            verificationId: verificationId, channel: channel, maskedDestination: "+1******0123",
            expiresAt: Fixture.now.addingTimeInterval(600), sent: sent)
    }

    static func wrongCode(remainingAttempts: Int) throws -> TransportResponse {
        var problem = Problem(code: .wrongCode, detail: "scripted")
        problem.remainingAttempts = remainingAttempts
        var response = try Fixture.json(problem, status: 401)
        response.headers["Content-Type"] = "application/problem+json"
        return response
    }

    static let noContent = TransportResponse(status: 204)
}

/// A ``Transport`` that can hold requests until released, so that tests can make calls overlap; it records and
/// answers them with a ``RecordingTransport``.
actor HoldingTransport: Transport {
    let recording = RecordingTransport()
    private var isHolding = false
    private var held: [CheckedContinuation<Void, Never>] = []

    /// How many requests are waiting for ``release()``.
    var heldCount: Int { held.count }

    /// Holds every request from now on until ``release()``, or for at most two minutes, so that a test that fails
    /// before releasing them fails rather than hangs (a shorter bound let go of the requests before a test on a busy
    /// machine had counted them).
    func hold() {
        isHolding = true
        Task {
            try? await Task.sleep(for: .seconds(120))
            self.release()
        }
    }

    /// Lets the held requests, and every later one, through.
    func release() {
        isHolding = false
        for continuation in held {
            continuation.resume()
        }
        held.removeAll()
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        if isHolding {
            await withCheckedContinuation { held.append($0) }
        }
        return try await recording.send(request)
    }
}

/// The `sleep` of a ``VeritySession`` under test: records each requested delay and waits until the test wakes it.
actor ManualSleeper {
    private(set) var requested: [Duration] = []
    private(set) var cancelledCount = 0
    private var sleepers: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var nextId = 0

    /// How many sleeps are waiting to be woken.
    var pendingCount: Int { sleepers.count }

    func sleep(for duration: Duration) async throws {
        requested.append(duration)
        let id = nextId
        nextId += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    sleepers[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    /// Ends every pending sleep, as if its time had come.
    func wakeAll() {
        let waking = sleepers.values
        sleepers.removeAll()
        for continuation in waking {
            continuation.resume()
        }
    }

    private func cancel(_ id: Int) {
        guard let continuation = sleepers.removeValue(forKey: id) else { return }
        cancelledCount += 1
        continuation.resume(throwing: CancellationError())
    }
}

/// A clock the test moves.
// @unchecked Sendable: `current` is only touched while holding `lock`.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Fixture.now

    var now: Date { lock.withLock { current } }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }
}

/// A ``VeritySession`` wired to a holding transport, an in-memory store, a test clock and a manual sleeper.
struct SessionHarness {
    let transport = HoldingTransport()
    let sleeper = ManualSleeper()
    let clock = TestClock()
    let store: InMemorySecureStore
    let verity: VeritySession
    /// The app verification the session uses, over the same transport, when the test asked for one.
    let appVerification: VerityAppVerification?

    init(
        store: InMemorySecureStore = InMemorySecureStore(), projectId: String = SessionFixture.projectId,
        logger: VerityLogger = .disabled, appVerificationTimeout: Duration? = nil
    ) throws {
        self.store = store
        let clock = clock
        let sleeper = sleeper
        let transport = transport
        let configuration = VerityConfiguration(baseURL: try Fixture.baseURL(), appId: "com.example.app")
        appVerification = appVerificationTimeout.map {
            VerityAppVerification(configuration: configuration, projectId: projectId, transport: transport, timeout: $0)
        }
        verity = VeritySession(
            configuration: configuration, projectId: projectId, transport: transport, store: store, logger: logger,
            clock: { clock.now }, sleep: { try await sleeper.sleep(for: $0) }, appVerification: appVerification)
    }

    /// The secure-store item of the project's session.
    static let storageKey = "verity.session.\(SessionFixture.projectId)"

    func enqueue(_ response: TransportResponse) async {
        await transport.recording.enqueue(response)
    }

    func enqueue(_ value: some Encodable, status: Int = 200) async throws {
        await transport.recording.enqueue(try Fixture.json(value, status: status))
    }

    func enqueue(failure: any Error) async {
        await transport.recording.enqueue(failure: failure)
    }

    var requests: [TransportRequest] {
        get async { await transport.recording.requests }
    }

    func request(_ index: Int) async throws -> TransportRequest {
        let requests = await requests
        try #require(requests.indices.contains(index), "request \(index) was not sent")
        return requests[index]
    }

    /// Signs in by email code with `answer` as the server's answer.
    @discardableResult
    func signIn(_ answer: AuthResponse? = nil) async throws -> Session {
        try await enqueue(answer ?? SessionFixture.auth())
        return try await verity.verifyOTP(loginId: SessionFixture.email, code: SessionFixture.code)
    }
}

/// Waits until `condition` holds, for at most two minutes.
func eventually(
    _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    // A generous deadline, not a timing bound: a busy machine (a parallel test run on two cores) can starve the
    // tasks being waited for for many seconds; a condition that holds returns at once.
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    try #require(try await condition(), comment, sourceLocation: sourceLocation)
}

/// The token of a request's `Authorization: Bearer …` header.
func bearerToken(of request: TransportRequest) -> String? {
    guard let authorization = request.value(forHeader: "Authorization"), authorization.hasPrefix("Bearer ") else {
        return nil
    }
    return String(authorization.dropFirst("Bearer ".count))
}
