import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import VerityCore
import VerityTestSupport
import _CryptoExtras

@testable import VerityServer

/// Drives ``FCMPushSender`` against a local stand-in for Google's OAuth 2.0 token endpoint and the FCM HTTP v1 API.
/// The stand-in verifies the RS256 assertion with the service account's public key, issues
/// access tokens, and checks them on `messages:send`.
@Suite("FCMPushSender")
struct FCMPushSenderTests {
    static let projectID = "verity-test"
    static let clientEmail = "verity-push@verity-test.iam.gserviceaccount.com"
    static let privateKeyID = "0123456789abcdef0123456789abcdef01234567"
    static let registrationToken =
        "eXampleRegistrationToken:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx4k2KmvE5vQ3vP8jzGq8x9vT7sW6u5R4e3W2q1"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let sendPath = "/v1/projects/\(projectID)/messages:send"

    func notification(
        id: String = "msg_01FCMTEST",
        token: String = registrationToken,
        expiresAt: Int = Int(start.timeIntervalSince1970) + 300
    ) -> PushNotification {
        PushNotification(
            id: id, platform: .fcm, token: token, appId: "com.example.verity", title: "Sign-in request",
            body: "Approve the sign-in to Example from Chrome on Linux? ✅", challengeId: "chl_01CHALLENGE",
            factorId: "fac_01FACTOR", expiresAt: expiresAt)
    }

    func makeSender(
        _ stand: FCMStandInEndpoint,
        privateKeyPEM: String? = nil,
        logs: CapturedLogs = CapturedLogs(),
        clock: PushTestClock = PushTestClock(start)
    ) throws -> FCMPushSender {
        FCMPushSender(
            configuration: FCMConfiguration(
                serviceAccountJSON: try stand.serviceAccountJSON(privateKeyPEM: privateKeyPEM), baseURL: stand.baseURL),
            provider: ProviderClient(httpClient: stand.client, logger: logs.logger, now: clock.now)
        )
    }

    @Test("obtains an access token with a verified RS256 assertion, then posts the data message")
    func sendsDataMessage() async throws {
        let logs = CapturedLogs()
        let recorded = try await withFCMStandIn { stand in
            try await makeSender(stand, logs: logs).send(notification())
        }

        let tokenRequest = try #require(recorded.tokenRequests.only)
        #expect(tokenRequest.contentType == "application/x-www-form-urlencoded")
        #expect(tokenRequest.fields.map(\.name) == ["grant_type", "assertion"])
        #expect(tokenRequest.fields.first?.value == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let assertion = try #require(tokenRequest.assertion)
        #expect(assertion.header == ["alg": "RS256", "kid": Self.privateKeyID, "typ": "JWT"])
        #expect(assertion.claims.keys.sorted() == ["aud", "exp", "iat", "iss", "scope"])
        #expect(assertion.claims["iss"] as? String == Self.clientEmail)
        #expect(assertion.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(assertion.claims["aud"] as? String == "\(recorded.baseURL)/token")
        #expect(assertion.claims["iat"] as? Int == Int(Self.start.timeIntervalSince1970))
        #expect(assertion.claims["exp"] as? Int == Int(Self.start.timeIntervalSince1970) + 3600)
        #expect(
            tokenRequest.signatureVerified, "the stand-in verifies the assertion with the service account's public key")
        #expect(tokenRequest.answered == 200)

        let send = try #require(recorded.sendRequests.only)
        #expect(send.path == Self.sendPath)
        #expect(send.headers["authorization"] == "Bearer ya29.stand-in-1")
        #expect(send.headers["content-type"]?.hasPrefix("application/json") == true)
        #expect(send.answered == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(send.body)) as? [String: Any])
        #expect(body.keys.sorted() == ["message"])
        let message = try #require(body["message"] as? [String: Any])
        #expect(message.keys.sorted() == ["android", "data", "token"], "a data message: no notification block")
        #expect(message["token"] as? String == Self.registrationToken)
        #expect(
            message["data"] as? [String: String] == [
                "type": "verity.challenge",
                "challengeId": "chl_01CHALLENGE",
                "factorId": "fac_01FACTOR",
                "title": "Sign-in request",
                "body": "Approve the sign-in to Example from Chrome on Linux? ✅",
            ])
        #expect(message["android"] as? [String: String] == ["priority": "high", "ttl": "300s"])

        let lines = logs.lines
        #expect(lines.contains { $0.contains("projects/\(Self.projectID)/messages/0:1800000000") })
        for line in lines {
            #expect(!line.contains("ya29."), "the access token is never logged")
            #expect(!line.contains(assertion.compact), "the assertion is never logged")
            #expect(!line.contains("PRIVATE KEY"))
            #expect(!line.contains(Self.registrationToken), "the registration token is masked")
        }
    }

    @Test("a silent notification (app verification) is a data message with only its keys")
    func sendsSilent() async throws {
        let data = ["type": "verity.app_verification", "appVerificationId": "apv_1_x", "secret": "s3cret"]
        let recorded = try await withFCMStandIn { stand in
            try await makeSender(stand).send(
                .silent(
                    id: "msg_01SILENT", platform: .fcm, token: Self.registrationToken, appId: nil, data: data,
                    expiresAt: Int(Self.start.timeIntervalSince1970) + 300))
        }
        let send = try #require(recorded.sendRequests.only)
        #expect(send.answered == 200)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(send.body)) as? [String: Any])
        let message = try #require(body["message"] as? [String: Any])
        #expect(message["data"] as? [String: String] == data)
    }

    @Test("the access token is cached: sequential and concurrent sends need one token request")
    func cachesAccessToken() async throws {
        let recorded = try await withFCMStandIn { stand in
            let sender = try makeSender(stand)
            try await sender.send(notification())
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask { try await sender.send(notification(id: "msg_\(index)")) }
                }
                try await group.waitForAll()
            }
            try await sender.send(notification())
        }
        #expect(recorded.tokenRequests.count == 1)
        #expect(recorded.sendRequests.count == 14)
        #expect(recorded.sendRequests.allSatisfy { $0.headers["authorization"] == "Bearer ya29.stand-in-1" })
    }

    @Test("the access token is replaced 5 minutes before it expires")
    func refreshesBeforeExpiry() async throws {
        let clock = PushTestClock(Self.start)
        let far = Int(Self.start.timeIntervalSince1970) + 3 * 3600
        let recorded = try await withFCMStandIn { stand in
            let sender = try makeSender(stand, clock: clock)
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 3599 - 300 - 1)
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 1)
            try await sender.send(notification(expiresAt: far))
        }
        #expect(recorded.tokenRequests.count == 2)
        let t0 = Int(Self.start.timeIntervalSince1970)
        #expect(recorded.tokenRequests.map { $0.assertion?.claims["iat"] as? Int } == [t0, t0 + 3299])
        #expect(recorded.tokenRequests.allSatisfy { $0.signatureVerified })
        #expect(
            recorded.sendRequests.map { $0.headers["authorization"] } == [
                "Bearer ya29.stand-in-1", "Bearer ya29.stand-in-1", "Bearer ya29.stand-in-2",
            ])
    }

    @Test("401 drops the cached access token: the failure is transient and the retry gets a new token")
    func unauthorizedRefreshesToken() async throws {
        let recorded = try await withFCMStandIn(sendAnswers: [.ok, .unauthenticated]) { stand in
            let sender = try makeSender(stand)
            try await sender.send(notification())
            let failure = await PushFailure.of { try await sender.send(notification()) }
            #expect(failure == .delivery(.transient, "fcm 401 UNAUTHENTICATED"))
            try await sender.send(notification())
        }
        #expect(recorded.tokenRequests.count == 2)
        #expect(
            recorded.sendRequests.map { $0.headers["authorization"] } == [
                "Bearer ya29.stand-in-1", "Bearer ya29.stand-in-1", "Bearer ya29.stand-in-2",
            ])
        #expect(recorded.sendRequests.map(\.answered) == [200, 401, 200])
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var answer: FCMSendAnswer
        var expected: PushFailure
        var testDescription: String { "\(answer) → \(expected)" }
    }

    @Test(
        "maps FCM's errors",
        arguments: [
            ErrorCase(answer: .unregistered, expected: .tokenInvalid("fcm 404 UNREGISTERED")),
            ErrorCase(answer: .invalidRegistrationToken, expected: .tokenInvalid("fcm 400 INVALID_ARGUMENT")),
            ErrorCase(answer: .invalidTokenField, expected: .tokenInvalid("fcm 400 INVALID_ARGUMENT")),
            ErrorCase(answer: .invalidData, expected: .delivery(.permanent, "fcm 400 INVALID_ARGUMENT")),
            ErrorCase(answer: .unavailable, expected: .delivery(.transient, "fcm 503 UNAVAILABLE")),
            ErrorCase(answer: .quotaExceeded, expected: .delivery(.transient, "fcm 429 QUOTA_EXCEEDED")),
            ErrorCase(answer: .internalError, expected: .delivery(.transient, "fcm 500 INTERNAL")),
            ErrorCase(answer: .senderIDMismatch, expected: .delivery(.permanent, "fcm 403 SENDER_ID_MISMATCH")),
            ErrorCase(
                answer: .thirdPartyAuthError, expected: .delivery(.permanent, "fcm 401 THIRD_PARTY_AUTH_ERROR")),
        ]
    )
    func errorMapping(_ errorCase: ErrorCase) async throws {
        let logs = CapturedLogs()
        let recorded = try await withFCMStandIn(sendAnswers: [errorCase.answer]) { stand in
            let failure = await PushFailure.of { try await makeSender(stand, logs: logs).send(notification()) }
            #expect(failure == errorCase.expected)
        }
        #expect(recorded.sendRequests.count == 1, "a failed send is not retried inside the sender")
        for line in logs.lines {
            #expect(!line.contains("ya29."))
            #expect(!line.contains(Self.registrationToken))
        }
    }

    @Test("an assertion signed with another key is refused by the token endpoint: permanent, nothing sent")
    func wrongKeyIsRefused() async throws {
        let other = try generateRSAKey()
        let otherKey = other.privateKeyPEM
        let recorded = try await withFCMStandIn { stand in
            let sender = try makeSender(stand, privateKeyPEM: otherKey)
            let failure = await PushFailure.of { try await sender.send(notification()) }
            #expect(failure == .delivery(.permanent, "fcm oauth 400 invalid_grant"))
        }
        #expect(recorded.tokenRequests.count == 1)
        #expect(recorded.tokenRequests.first?.signatureVerified == false)
        #expect(recorded.sendRequests.isEmpty)
    }

    @Test("a token endpoint outage is transient, and the next send asks again")
    func tokenEndpointUnavailable() async throws {
        let recorded = try await withFCMStandIn(tokenAnswers: [.unavailable]) { stand in
            let sender = try makeSender(stand)
            let failure = await PushFailure.of { try await sender.send(notification()) }
            #expect(failure == .delivery(.transient, "fcm oauth 503"))
            try await sender.send(notification())
        }
        #expect(recorded.tokenRequests.map(\.answered) == [503, 200])
        #expect(recorded.sendRequests.count == 1)
    }

    @Test("the TTL runs until the challenge expires, capped at 28 days; an expired one is not sent")
    func timeToLive() async throws {
        let clock = PushTestClock(Self.start.addingTimeInterval(100))
        let t0 = Int(Self.start.timeIntervalSince1970)
        let recorded = try await withFCMStandIn { stand in
            let sender = try makeSender(stand, clock: clock)
            try await sender.send(notification(expiresAt: t0 + 300))
            try await sender.send(notification(expiresAt: t0 + 90 * 24 * 3600))
            let failure = await PushFailure.of { try await sender.send(notification(expiresAt: t0 + 100)) }
            #expect(failure == .delivery(.permanent, "fcm notification expired before delivery"))
        }
        let ttls = try recorded.sendRequests.map { request in
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            let message = try #require(body["message"] as? [String: Any])
            return (message["android"] as? [String: String])?["ttl"]
        }
        #expect(ttls == ["200s", "2419200s"])
    }

    @Test("an unusable service account fails permanently without a request, and validate() says so")
    func invalidServiceAccount() async throws {
        let recorded = try await withFCMStandIn { stand in
            let valid = try stand.serviceAccountJSON()
            var missingEmail = try #require(try JSONSerialization.jsonObject(with: Data(valid.utf8)) as? [String: Any])
            missingEmail["client_email"] = nil
            let cases: [(json: String, reason: String)] = [
                ("not json", "fcm service account is not a JSON key file"),
                (
                    String(decoding: try JSONSerialization.data(withJSONObject: missingEmail), as: UTF8.self),
                    "fcm service account has no client_email"
                ),
                (
                    try stand.serviceAccountJSON(privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n"),
                    "fcm service account private_key is not a PEM RSA key of 2048 bits or more"
                ),
            ]
            for (json, reason) in cases {
                let configuration = FCMConfiguration(serviceAccountJSON: json, baseURL: stand.baseURL)
                #expect(throws: DeliveryError.self) { try configuration.validate() }
                let sender = FCMPushSender(
                    configuration: configuration,
                    provider: ProviderClient(httpClient: stand.client, logger: Logger(label: "test")))
                let failure = await PushFailure.of { try await sender.send(notification()) }
                #expect(failure == .delivery(.permanent, reason))
            }
            let configuration = FCMConfiguration(serviceAccountJSON: valid)
            try configuration.validate()
            let description = "\(configuration)"
            #expect(!description.contains("PRIVATE KEY"))
            #expect(description.contains(Self.projectID) && description.contains(Self.clientEmail))
        }
        #expect(recorded.tokenRequests.isEmpty)
        #expect(recorded.sendRequests.isEmpty)
    }

    @Test("an empty token is invalid and another platform is refused, without a request")
    func refusedWithoutRequest() async throws {
        let recorded = try await withFCMStandIn { stand in
            let sender = try makeSender(stand)
            let empty = await PushFailure.of { try await sender.send(notification(token: "")) }
            #expect(empty == .tokenInvalid("fcm registration token is empty"))
            var apns = notification()
            apns.platform = .apns
            let wrongPlatform = await PushFailure.of { try await sender.send(apns) }
            #expect(wrongPlatform == .delivery(.permanent, "fcm sends fcm pushes only, not apns"))
        }
        #expect(recorded.tokenRequests.isEmpty)
        #expect(recorded.sendRequests.isEmpty)
    }

    @Test("a refused connection to the token endpoint is transient")
    func connectionRefused() async throws {
        let port = try await loopbackPortWithNoListener()
        let key = try generateRSAKey()
        try await withNonRetryingHTTPClient { client in
            let endpoint = FCMStandInEndpoint(baseURL: "http://127.0.0.1:\(port)", client: client, key: key)
            let sender = try makeSender(endpoint)
            let failure = await PushFailure.of { try await sender.send(notification()) }
            guard case .delivery(.transient, let reason) = failure else {
                Issue.record("expected a transient failure, got \(String(describing: failure))")
                return
            }
            #expect(reason.hasPrefix("fcm oauth request failed"))
        }
    }
}

// MARK: - The FCM stand-in

/// How the stand-in answers `messages:send`, with FCM's real status codes and error bodies.
enum FCMSendAnswer: String, Sendable {
    case ok, unregistered, invalidRegistrationToken, invalidTokenField, invalidData, unavailable, quotaExceeded,
        internalError, senderIDMismatch, thirdPartyAuthError
    /// Revokes every issued access token, then answers 401 as Google does for a bad token.
    case unauthenticated

    var status: HTTPResponse.Status {
        switch self {
        case .ok: .ok
        case .unregistered: .notFound
        case .invalidRegistrationToken, .invalidTokenField, .invalidData: .badRequest
        case .unavailable: .serviceUnavailable
        case .quotaExceeded: .tooManyRequests
        case .internalError: .internalServerError
        case .senderIDMismatch: .forbidden
        case .thirdPartyAuthError, .unauthenticated: .unauthorized
        }
    }

    var body: String {
        func error(_ code: Int, _ message: String, _ status: String, _ details: String...) -> String {
            #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)","details":[\#(details.joined(separator: ","))]}}"#
        }
        func fcmError(_ code: String) -> String {
            #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}"#
        }
        func badRequest(_ field: String, _ description: String) -> String {
            #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(field)","description":"\#(description)"}]}"#
        }
        switch self {
        case .ok:
            return #"{"name":"projects/\#(FCMPushSenderTests.projectID)/messages/0:1800000000000000"}"#
        case .unregistered:
            return error(404, "Requested entity was not found.", "NOT_FOUND", fcmError("UNREGISTERED"))
        case .invalidRegistrationToken:
            return error(
                400, "The registration token is not a valid FCM registration token", "INVALID_ARGUMENT",
                fcmError("INVALID_ARGUMENT"))
        case .invalidTokenField:
            return error(
                400, "Invalid value at 'message.token'", "INVALID_ARGUMENT",
                badRequest("message.token", "Invalid registration token"), fcmError("INVALID_ARGUMENT"))
        case .invalidData:
            return error(
                400, "Invalid value at 'message.data[0].value' (TYPE_STRING), 12", "INVALID_ARGUMENT",
                badRequest("message.data[0].value", "Invalid value at 'message.data[0].value' (TYPE_STRING), 12"))
        case .unavailable:
            return error(503, "The service is currently unavailable.", "UNAVAILABLE", fcmError("UNAVAILABLE"))
        case .quotaExceeded:
            return error(
                429, "Quota exceeded for quota metric 'Send requests'.", "RESOURCE_EXHAUSTED",
                fcmError("QUOTA_EXCEEDED"))
        case .internalError:
            return error(500, "Internal error encountered.", "INTERNAL", fcmError("INTERNAL"))
        case .senderIDMismatch:
            return error(403, "SenderId mismatch", "PERMISSION_DENIED", fcmError("SENDER_ID_MISMATCH"))
        case .thirdPartyAuthError:
            return error(
                401, "Auth error from APNS or Web Push Service", "UNAUTHENTICATED", fcmError("THIRD_PARTY_AUTH_ERROR"))
        case .unauthenticated:
            return
                #"{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.","status":"UNAUTHENTICATED"}}"#
        }
    }
}

/// How the stand-in's token endpoint answers a valid assertion.
enum FCMTokenAnswer: Sendable {
    case issue, unavailable
}

/// One token request as the stand-in saw it.
struct FCMTokenRequest: Sendable {
    var contentType: String?
    var fields: [FCMFormField]
    var assertion: FCMDecodedAssertion?
    /// Whether the assertion's signature verified with the service account's public key.
    var signatureVerified: Bool
    var answered: Int
}

struct FCMFormField: Sendable, Equatable {
    var name: String
    var value: String
}

/// An RS256 assertion decoded independently of the sender.
struct FCMDecodedAssertion: @unchecked Sendable {
    var compact: String
    var signingInput: String
    var signature: Data
    var header: [String: String]
    var claims: [String: Any]

    init?(_ compact: String) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = decodeBase64URL(parts[0]),
            let claimBytes = decodeBase64URL(parts[1]), let signature = decodeBase64URL(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: String],
            let claims = try? JSONSerialization.jsonObject(with: claimBytes) as? [String: Any]
        else { return nil }
        self.compact = compact
        self.signingInput = "\(parts[0]).\(parts[1])"
        self.signature = signature
        self.header = header
        self.claims = claims
    }
}

/// One `messages:send` request as the stand-in saw it.
struct FCMSendRequest: Sendable {
    var path: String
    var headers: [String: String]
    var body: [UInt8]
    var answered: Int
}

/// Everything the stand-in saw.
struct FCMStandInRecord: Sendable {
    var baseURL: String
    var tokenRequests: [FCMTokenRequest]
    var sendRequests: [FCMSendRequest]
}

extension Array {
    /// The single element, or `nil` when there were none or several.
    fileprivate var only: Element? { count == 1 ? first : nil }
}

/// The stand-in's state: scripted answers, issued access tokens and the requests seen.
actor FCMStandInState {
    private var sendAnswers: [FCMSendAnswer]
    private var tokenAnswers: [FCMTokenAnswer]
    private var validTokens: Set<String> = []
    private var issued = 0
    private(set) var tokenRequests: [FCMTokenRequest] = []
    private(set) var sendRequests: [FCMSendRequest] = []

    init(sendAnswers: [FCMSendAnswer], tokenAnswers: [FCMTokenAnswer]) {
        self.sendAnswers = sendAnswers
        self.tokenAnswers = tokenAnswers
    }

    func nextTokenAnswer() -> FCMTokenAnswer {
        tokenAnswers.isEmpty ? .issue : tokenAnswers.removeFirst()
    }

    func issueToken() -> String {
        issued += 1
        let token = "ya29.stand-in-\(issued)"
        validTokens.insert(token)
        return token
    }

    func isValid(_ token: String) -> Bool { validTokens.contains(token) }

    /// The next scripted answer; `.unauthenticated` revokes every token issued so far.
    func nextSendAnswer() -> FCMSendAnswer {
        let answer = sendAnswers.isEmpty ? .ok : sendAnswers.removeFirst()
        if answer == .unauthenticated { validTokens.removeAll() }
        return answer
    }

    func record(_ request: FCMTokenRequest) { tokenRequests.append(request) }
    func record(_ request: FCMSendRequest) { sendRequests.append(request) }
}

/// An RSA key pair for the stand-in's service account, made in memory.
struct FCMTestKey: Sendable {
    /// PKCS#8 PEM, as in a service-account key file.
    var privateKeyPEM: String
    /// The public half, which the stand-in's token endpoint checks assertions with.
    var publicKey: _RSA.Signing.PublicKey
}

/// Generates a 2048-bit RSA key.
func generateRSAKey() throws -> FCMTestKey {
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    return FCMTestKey(privateKeyPEM: key.pkcs8PEMRepresentation, publicKey: key.publicKey)
}

/// Whether `signature` is an RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signature of `signingInput` by `publicKey`.
func verifiesRS256(signingInput: String, signature: Data, publicKey: _RSA.Signing.PublicKey) -> Bool {
    publicKey.isValidSignature(
        _RSA.Signing.RSASignature(rawRepresentation: signature), for: Data(signingInput.utf8),
        padding: .insecurePKCS1v1_5)
}

/// What a test gets to talk to the stand-in.
struct FCMStandInEndpoint: Sendable {
    /// `http://127.0.0.1:<port>`: FCM's origin, and the token endpoint at `/token`.
    var baseURL: String
    var client: HTTPClient
    var key: FCMTestKey

    /// A service-account key file as Google issues it, with `token_uri` pointing at the stand-in.
    func serviceAccountJSON(privateKeyPEM: String? = nil) throws -> String {
        let file: [String: String] = [
            "type": "service_account",
            "project_id": FCMPushSenderTests.projectID,
            "private_key_id": FCMPushSenderTests.privateKeyID,
            "private_key": privateKeyPEM ?? key.privateKeyPEM,
            "client_email": FCMPushSenderTests.clientEmail,
            "client_id": "112233445566778899000",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": "\(baseURL)/token",
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "universe_domain": "googleapis.com",
        ]
        let data = try JSONSerialization.data(withJSONObject: file, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Runs `body` against a stand-in for Google's token endpoint (`POST /token`) and FCM (`POST
/// /v1/projects/{project}/messages:send`) over HTTP/1.1 on 127.0.0.1.
///
/// The token endpoint checks the grant type, verifies the assertion's RS256 signature with the service account's
/// public key and its claims (issuer, scope, audience, a one-hour lifetime), and answers like Google:
/// `{"access_token":"ya29.stand-in-N","expires_in":3599,"token_type":"Bearer"}`, or 400 `invalid_grant`. The send
/// endpoint answers 401 to any bearer token it did not issue, then replays `sendAnswers` and answers 200 once they run
/// out.
func withFCMStandIn(
    sendAnswers: [FCMSendAnswer] = [],
    tokenAnswers: [FCMTokenAnswer] = [],
    _ body: (FCMStandInEndpoint) async throws -> Void
) async throws -> FCMStandInRecord {
    let key = try generateRSAKey()
    let state = FCMStandInState(sendAnswers: sendAnswers, tokenAnswers: tokenAnswers)
    let baseURLBox = NIOLockedValueBox("")
    let router = Router()
    router.post("**") { request, _ -> Response in
        let bytes = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let path = request.uri.path
        func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
            var fields = HTTPFields()
            fields[.contentType] = "application/json; charset=UTF-8"
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
        }

        if path == "/token" {
            let fields = (decodeForm(String(decoding: bytes.readableBytesView, as: UTF8.self)) ?? [])
                .map { FCMFormField(name: $0.name, value: $0.value) }
            let grantType = fields.first { $0.name == "grant_type" }?.value
            let assertion = fields.first { $0.name == "assertion" }.flatMap { FCMDecodedAssertion($0.value) }
            let verified =
                assertion.map {
                    verifiesRS256(signingInput: $0.signingInput, signature: $0.signature, publicKey: key.publicKey)
                } ?? false
            let claims = assertion?.claims ?? [:]
            let audience = baseURLBox.withLockedValue { $0 } + "/token"
            let response: Response
            if grantType != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
                response = json(
                    .badRequest, #"{"error":"unsupported_grant_type","error_description":"Invalid grant_type: "}"#)
            } else if !verified || assertion?.header["alg"] != "RS256"
                || claims["iss"] as? String != FCMPushSenderTests.clientEmail
                || claims["scope"] as? String != FCMPushSenderScope.value || claims["aud"] as? String != audience
            {
                response = json(.badRequest, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
            } else if let iat = claims["iat"] as? Int, let exp = claims["exp"] as? Int, exp > iat, exp - iat <= 3600 {
                switch await state.nextTokenAnswer() {
                case .issue:
                    let token = await state.issueToken()
                    response = json(.ok, #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#)
                case .unavailable:
                    response = Response(status: .serviceUnavailable)
                }
            } else {
                response = json(
                    .badRequest,
                    #"{"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe."}"#
                )
            }
            await state.record(
                FCMTokenRequest(
                    contentType: headers["content-type"], fields: fields, assertion: assertion,
                    signatureVerified: verified, answered: Int(response.status.code)))
            return response
        }

        let response: Response
        if path != FCMPushSenderTests.sendPath {
            response = json(.notFound, #"{"error":{"code":404,"message":"Not Found","status":"NOT_FOUND"}}"#)
        } else if let authorization = headers["authorization"], authorization.hasPrefix("Bearer "),
            await state.isValid(String(authorization.dropFirst("Bearer ".count)))
        {
            let message =
                (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any])?[
                    "message"] as? [String: Any]
            if (message?["token"] as? String)?.isEmpty ?? true {
                response = json(
                    .badRequest, FCMSendAnswer.invalidRegistrationToken.body)
            } else {
                let answer = await state.nextSendAnswer()
                response = json(answer.status, answer.body)
            }
        } else {
            response = json(.unauthorized, FCMSendAnswer.unauthenticated.body)
        }
        await state.record(
            FCMSendRequest(
                path: path, headers: headers, body: Array(bytes.readableBytesView), answered: Int(response.status.code))
        )
        return response
    }

    var baseURL = ""
    try await withLoopbackServer(router: router) { port in
        baseURL = "http://127.0.0.1:\(port)"
        baseURLBox.withLockedValue { [baseURL] in $0 = baseURL }
        try await withNonRetryingHTTPClient { client in
            try await body(FCMStandInEndpoint(baseURL: baseURL, client: client, key: key))
        }
    }
    return FCMStandInRecord(
        baseURL: baseURL, tokenRequests: await state.tokenRequests, sendRequests: await state.sendRequests)
}

/// The OAuth scope, spelled out independently of the sender.
enum FCMPushSenderScope {
    static let value = "https://www.googleapis.com/auth/firebase.messaging"
}
