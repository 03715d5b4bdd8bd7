import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Drives ``APNsPushSender`` against a local stand-in that speaks APNs' provider API: HTTP/2 over TLS, provider
/// tokens checked against the registered key, and APNs' status codes and error bodies.
@Suite("APNsPushSender")
struct APNsPushSenderTests {
    static let teamID = "TEAM123456"
    static let keyID = "KEY7890ABC"
    static let topic = "com.example.verity"
    static let deviceToken = "7c1b3e5a9d2f4c6e8a0b1d3f5e7a9c2b4d6f8e0a1c3e5b7d9f2a4c6e8b0d1f3a"
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    let key = P256.Signing.PrivateKey()

    func notification(
        id: String = "msg_01APNSTEST",
        token: String = deviceToken,
        appId: String? = nil,
        title: String = "Sign-in request",
        body: String = "Approve the sign-in to Example from Safari on macOS? ✅",
        expiresAt: Int = Int(start.timeIntervalSince1970) + 300
    ) -> PushNotification {
        PushNotification(
            id: id, platform: .apns, token: token, appId: appId, title: title, body: body,
            challengeId: "chl_01CHALLENGE", factorId: "fac_01FACTOR", expiresAt: expiresAt)
    }

    func configuration(
        baseURL: String?, privateKeyPEM: String? = nil, topic: String = topic, certificateVerification: Bool = false
    ) -> APNsConfiguration {
        APNsConfiguration(
            teamID: Self.teamID,
            keyID: Self.keyID,
            privateKeyPEM: privateKeyPEM ?? key.pemRepresentation,
            topic: topic,
            environment: .sandbox,
            baseURL: baseURL,
            certificateVerification: certificateVerification
        )
    }

    func makeSender(
        _ stand: APNsStandInEndpoint, logs: CapturedLogs = CapturedLogs(), clock: PushTestClock = PushTestClock(start)
    ) -> APNsPushSender {
        APNsPushSender(
            configuration: configuration(baseURL: stand.baseURL),
            provider: ProviderClient(httpClient: stand.client, logger: logs.logger, now: clock.now)
        )
    }

    @Test("posts an alert over HTTP/2 with every APNs header, a valid provider token and the challenge payload")
    func sendsAlert() async throws {
        let logs = CapturedLogs()
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            try await makeSender(stand, logs: logs).send(notification())
        }
        let request = try #require(recorded.only)

        // HTTP/2: the request arrived on an HTTP/2 stream channel, with the `:scheme` and `:authority` pseudo-headers.
        #expect(request.channelType.contains("HTTP2StreamChannel"), "arrived on \(request.channelType)")
        #expect(request.scheme == "https")
        #expect(request.authority?.hasPrefix("127.0.0.1:") == true)
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/\(Self.deviceToken)")
        #expect(request.answered == 200)

        #expect(request.headers["apns-topic"] == Self.topic)
        #expect(request.headers["apns-push-type"] == "alert")
        #expect(request.headers["apns-priority"] == "10")
        #expect(request.headers["apns-expiration"] == "\(Int(Self.start.timeIntervalSince1970) + 300)")
        #expect(request.headers["apns-collapse-id"] == "chl_01CHALLENGE")
        #expect(request.headers["apns-id"] == APNsPushSender.apnsID(forMessageID: "msg_01APNSTEST"))
        #expect(request.headers["content-type"] == "application/json")

        // The provider token: ES256 over `header.claims` with the .p8 key, `{alg, kid}` and `{iss, iat}` exactly.
        let token = try #require(request.providerToken)
        #expect(token.header == ["alg": "ES256", "kid": Self.keyID])
        #expect(token.claims.keys.sorted() == ["iat", "iss"])
        #expect(token.claims["iss"] as? String == Self.teamID)
        #expect(token.claims["iat"] as? Int == Int(Self.start.timeIntervalSince1970))
        #expect(token.signatureVerifies)

        let payload = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(payload.keys.sorted() == ["aps", "challengeId", "factorId", "type"])
        #expect(payload["type"] as? String == "verity.challenge")
        #expect(payload["challengeId"] as? String == "chl_01CHALLENGE")
        #expect(payload["factorId"] as? String == "fac_01FACTOR")
        let aps = try #require(payload["aps"] as? [String: Any])
        #expect(aps.keys.sorted() == ["alert", "category", "mutable-content", "sound"])
        #expect(aps["sound"] as? String == "default")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["category"] as? String == "VERITY_CHALLENGE")
        let alert = try #require(aps["alert"] as? [String: String])
        #expect(
            alert == ["title": "Sign-in request", "body": "Approve the sign-in to Example from Safari on macOS? ✅"])

        let lines = logs.lines
        #expect(lines.contains { $0.contains("apns accepted notification") && $0.contains("HTTP/2") })
        for line in lines {
            #expect(!line.contains(Self.deviceToken), "the device token is masked")
            #expect(!line.contains(token.compact), "the provider token is never logged")
            #expect(!line.contains("PRIVATE KEY"))
        }
        #expect(lines.contains { $0.contains("7c1b3e…1f3a") }, "the masked token is logged for correlation")
    }

    @Test("a silent notification (app verification) is a background push at priority 5 with only its keys")
    func sendsSilent() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            try await makeSender(stand).send(
                .silent(
                    id: "msg_01SILENT", platform: .apns, token: Self.deviceToken, appId: nil,
                    data: ["type": "verity.app_verification", "appVerificationId": "apv_1_x", "secret": "s3cret"],
                    expiresAt: Int(Self.start.timeIntervalSince1970) + 300))
        }
        let request = try #require(recorded.only)
        #expect(request.answered == 200)
        #expect(request.headers["apns-push-type"] == "background")
        #expect(request.headers["apns-priority"] == "5")
        #expect(request.headers["apns-collapse-id"] == nil)
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(payload.keys.sorted() == ["appVerificationId", "aps", "secret", "type"])
        #expect(payload["aps"] as? [String: Int] == ["content-available": 1])
        #expect(payload["secret"] as? String == "s3cret")
    }

    @Test("the notification's appId is the topic when set; an empty one falls back to the configured topic")
    func appIdOverridesTopic() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let sender = makeSender(stand)
            try await sender.send(notification(appId: "com.example.other"))
            try await sender.send(notification(appId: ""))
        }
        #expect(recorded.map { $0.headers["apns-topic"] } == ["com.example.other", Self.topic])
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var answer: APNsStandInAnswer
        var expected: PushFailure
        var testDescription: String { "\(answer.status.code) \(answer.reason ?? "") → \(expected)" }
    }

    @Test(
        "maps APNs' answers",
        arguments: [
            ErrorCase(answer: .unregistered, expected: .tokenInvalid("apns 410 Unregistered")),
            ErrorCase(answer: .expiredToken, expected: .tokenInvalid("apns 410 ExpiredToken")),
            ErrorCase(answer: .badDeviceToken, expected: .tokenInvalid("apns 400 BadDeviceToken")),
            ErrorCase(answer: .deviceTokenNotForTopic, expected: .tokenInvalid("apns 400 DeviceTokenNotForTopic")),
            ErrorCase(answer: .expiredProviderToken, expected: .delivery(.transient, "apns 403 ExpiredProviderToken")),
            ErrorCase(answer: .invalidProviderToken, expected: .delivery(.transient, "apns 403 InvalidProviderToken")),
            ErrorCase(answer: .tooManyRequests, expected: .delivery(.transient, "apns 429 TooManyRequests")),
            ErrorCase(
                answer: .tooManyProviderTokenUpdates,
                expected: .delivery(.transient, "apns 429 TooManyProviderTokenUpdates")),
            ErrorCase(answer: .internalServerError, expected: .delivery(.transient, "apns 500 InternalServerError")),
            ErrorCase(answer: .serviceUnavailable, expected: .delivery(.transient, "apns 503 ServiceUnavailable")),
            ErrorCase(answer: .payloadTooLarge, expected: .delivery(.permanent, "apns 413 PayloadTooLarge")),
            ErrorCase(answer: .badTopic, expected: .delivery(.permanent, "apns 400 BadTopic")),
            ErrorCase(answer: .topicDisallowed, expected: .delivery(.permanent, "apns 400 TopicDisallowed")),
        ]
    )
    func errorMapping(_ errorCase: ErrorCase) async throws {
        let logs = CapturedLogs()
        let recorded = try await withAPNsStandIn(key: key.publicKey, answers: [errorCase.answer]) { stand in
            let failure = await PushFailure.of { try await makeSender(stand, logs: logs).send(notification()) }
            #expect(failure == errorCase.expected)
        }
        #expect(recorded.count == 1, "a failed send is not retried inside the sender")
        #expect(recorded.first?.answered == Int(errorCase.answer.status.code))
        for line in logs.lines {
            #expect(!line.contains(Self.deviceToken))
        }
    }

    @Test("403 ExpiredProviderToken drops the cached provider token: the retry carries a freshly minted one")
    func expiredProviderTokenIsReplaced() async throws {
        let logs = CapturedLogs()
        let clock = PushTestClock(Self.start)
        let recorded = try await withAPNsStandIn(key: key.publicKey, answers: [.ok, .expiredProviderToken]) { stand in
            let sender = makeSender(stand, logs: logs, clock: clock)
            let far = Int(Self.start.timeIntervalSince1970) + 3600
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 25 * 60)
            let failure = await PushFailure.of { try await sender.send(notification(expiresAt: far)) }
            #expect(failure == .delivery(.transient, "apns 403 ExpiredProviderToken"))
            try await sender.send(notification(expiresAt: far))
        }
        let tokens = recorded.compactMap(\.providerToken)
        try #require(tokens.count == 3)
        #expect(tokens[0].compact == tokens[1].compact, "the cached token is reused before APNs refuses it")
        #expect(tokens[2].compact != tokens[1].compact, "the refused token is not sent again")
        #expect(tokens[2].claims["iat"] as? Int == Int(Self.start.timeIntervalSince1970) + 25 * 60)
        #expect(tokens.allSatisfy { $0.signatureVerifies })
        #expect(recorded.map(\.answered) == [200, 403, 200])
        #expect(logs.lines.filter { $0.contains("minted apns provider token") }.count == 2)
    }

    @Test("the provider token is reused for 50 minutes, then minted again with a new iat")
    func providerTokenRefreshAfterFiftyMinutes() async throws {
        let clock = PushTestClock(Self.start)
        let far = Int(Self.start.timeIntervalSince1970) + 3 * 3600
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let sender = makeSender(stand, clock: clock)
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 50 * 60 - 1)
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 1)
            try await sender.send(notification(expiresAt: far))
            clock.advance(by: 49 * 60)
            try await sender.send(notification(expiresAt: far))
        }
        let tokens = recorded.compactMap(\.providerToken)
        try #require(tokens.count == 4)
        let t0 = Int(Self.start.timeIntervalSince1970)
        #expect(tokens.map { $0.claims["iat"] as? Int } == [t0, t0, t0 + 50 * 60, t0 + 50 * 60])
        #expect(tokens[0].compact == tokens[1].compact)
        #expect(tokens[1].compact != tokens[2].compact)
        #expect(tokens[2].compact == tokens[3].compact)
        #expect(tokens.allSatisfy { $0.signatureVerifies })
    }

    @Test("concurrent sends share one provider token")
    func concurrentSendsShareOneToken() async throws {
        let logs = CapturedLogs()
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let sender = makeSender(stand, logs: logs)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask { try await sender.send(notification(id: "msg_\(index)")) }
                }
                try await group.waitForAll()
            }
        }
        #expect(recorded.count == 16)
        #expect(Set(recorded.compactMap { $0.providerToken?.compact }).count == 1)
        #expect(Set(recorded.compactMap { $0.headers["apns-id"] }).count == 16)
        #expect(logs.lines.filter { $0.contains("minted apns provider token") }.count == 1)
    }

    @Test("the apns-id is a UUID derived from the outbox message id, so a retry reuses it")
    func apnsIDIsStable() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey, answers: [.internalServerError]) { stand in
            let sender = makeSender(stand)
            await #expect(throws: DeliveryError.self) { try await sender.send(notification()) }
            try await sender.send(notification())
            try await sender.send(notification(id: "msg_OTHER"))
        }
        let ids = recorded.compactMap { $0.headers["apns-id"] }
        try #require(ids.count == 3)
        #expect(ids[0] == ids[1])
        #expect(ids[1] != ids[2])
        for id in ids {
            let uuid = try #require(UUID(uuidString: id), "\(id) is a UUID")
            #expect(uuid.uuidString.lowercased() == id, "canonical lowercase form")
            #expect(Array(id)[14] == "8", "version 8 (RFC 9562)")
            #expect("89ab".contains(Array(id)[19]), "RFC 9562 variant")
        }
        #expect(
            APNsPushSender.apnsID(forMessageID: "msg_01APNSTEST")
                == APNsPushSender.apnsID(forMessageID: "msg_01APNSTEST"))
    }

    @Test("with certificate verification on, a client that trusts the stand-in's certificate gets through")
    func verifiesCertificate() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(stand.certificatePEM.utf8)))
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
            let trusting = APNsPushSender(
                configuration: configuration(baseURL: stand.baseURL, certificateVerification: true),
                provider: ProviderClient(
                    httpClient: client, logger: Logger(label: "test"), now: PushTestClock(Self.start).now)
            )
            let trusted = await PushFailure.of { try await trusting.send(notification()) }
            try await client.shutdown()
            #expect(trusted == nil)

            // The default trust roots do not include the test certificate: a failed handshake is transient.
            let untrusting = APNsPushSender(
                configuration: configuration(baseURL: stand.baseURL, certificateVerification: true),
                provider: ProviderClient(
                    httpClient: stand.client, logger: Logger(label: "test"), now: PushTestClock(Self.start).now)
            )
            let failure = await PushFailure.of { try await untrusting.send(notification()) }
            guard case .delivery(.transient, let reason) = failure else {
                Issue.record("expected a transient failure, got \(String(describing: failure))")
                return
            }
            #expect(reason.hasPrefix("apns request failed"))
        }
        #expect(recorded.count == 1, "only the trusting client's request arrived")
        #expect(recorded.first?.channelType.contains("HTTP2StreamChannel") == true)
    }

    @Test("a refused connection is transient")
    func connectionRefused() async throws {
        let port = try await loopbackPortWithNoListener()
        try await withNonRetryingHTTPClient { client in
            let sender = APNsPushSender(
                configuration: configuration(baseURL: "https://127.0.0.1:\(port)"),
                provider: ProviderClient(
                    httpClient: client, logger: Logger(label: "test"), now: PushTestClock(Self.start).now)
            )
            let failure = await PushFailure.of { try await sender.send(notification()) }
            guard case .delivery(.transient, let reason) = failure else {
                Issue.record("expected a transient failure, got \(String(describing: failure))")
                return
            }
            #expect(reason.hasPrefix("apns request failed"))
        }
    }

    @Test("an unusable key fails permanently without a request, and validate() says so")
    func invalidKey() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let configuration = configuration(
                baseURL: stand.baseURL, privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA")
            #expect(throws: DeliveryError.self) { try configuration.validate() }
            let sender = APNsPushSender(
                configuration: configuration,
                provider: ProviderClient(httpClient: stand.client, logger: Logger(label: "test")))
            let failure = await PushFailure.of { try await sender.send(notification()) }
            #expect(failure == .delivery(.permanent, "apns private key is not a PEM P-256 private key"))
        }
        #expect(recorded.isEmpty)
        try configuration(baseURL: nil).validate()
    }

    @Test("a token that is not hexadecimal is invalid without a request")
    func malformedDeviceToken() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let sender = makeSender(stand)
            for token in ["", "abc", "../../3/device/00", "zz" + String(Self.deviceToken.dropFirst(2))] {
                let failure = await PushFailure.of { try await sender.send(notification(token: token)) }
                #expect(failure == .tokenInvalid("apns device token is not hexadecimal"))
            }
        }
        #expect(recorded.isEmpty)
    }

    @Test("an expired notification, or one for another platform, fails permanently without a request")
    func refusedWithoutRequest() async throws {
        let recorded = try await withAPNsStandIn(key: key.publicKey) { stand in
            let sender = makeSender(stand)
            let expired = await PushFailure.of {
                try await sender.send(notification(expiresAt: Int(Self.start.timeIntervalSince1970)))
            }
            #expect(expired == .delivery(.permanent, "apns notification expired before delivery"))
            var fcm = notification()
            fcm.platform = .fcm
            let wrongPlatform = await PushFailure.of { try await sender.send(fcm) }
            #expect(wrongPlatform == .delivery(.permanent, "apns sends apns pushes only, not fcm"))
        }
        #expect(recorded.isEmpty)
    }

    @Test("environments and the configuration's description")
    func configurationBasics() {
        #expect(APNsConfiguration.Environment.production.baseURL == "https://api.push.apple.com")
        #expect(APNsConfiguration.Environment.sandbox.baseURL == "https://api.sandbox.push.apple.com")
        var configuration = configuration(baseURL: nil)
        #expect(configuration.resolvedBaseURL == "https://api.sandbox.push.apple.com")
        configuration.environment = .production
        #expect(configuration.resolvedBaseURL == "https://api.push.apple.com")
        configuration.baseURL = "https://127.0.0.1:8443/"
        #expect(configuration.resolvedBaseURL == "https://127.0.0.1:8443")
        let description = "\(configuration)"
        #expect(!description.contains("PRIVATE KEY"))
        #expect(description.contains(Self.teamID) && description.contains(Self.keyID))
    }

    @Test("status mapping without a body")
    func statusMapping() {
        #expect(APNsPushSender.outcome(status: 200, reason: nil) == .delivered)
        #expect(APNsPushSender.outcome(status: 410, reason: nil) == .tokenInvalid("apns 410"))
        #expect(APNsPushSender.outcome(status: 403, reason: "Forbidden") == .failed(.permanent, "apns 403 Forbidden"))
        #expect(APNsPushSender.outcome(status: 404, reason: "BadPath") == .failed(.permanent, "apns 404 BadPath"))
        #expect(APNsPushSender.outcome(status: 502, reason: nil) == .failed(.transient, "apns 502"))
    }
}

// MARK: - Outcomes

extension Array where Element == APNsStandInRequest {
    /// The single request, or `nil` when there were none or several.
    fileprivate var only: APNsStandInRequest? { count == 1 ? first : nil }
}

/// How a push send ended, comparable in expectations.
enum PushFailure: Equatable, Sendable, CustomStringConvertible {
    case tokenInvalid(String)
    case delivery(DeliveryError.Kind, String)
    case other(String)

    /// Runs `body` and classifies what it threw; `nil` when it succeeded.
    static func of(_ body: () async throws -> Void) async -> PushFailure? {
        do {
            try await body()
            return nil
        } catch let error as PushTokenInvalid {
            return .tokenInvalid(error.reason)
        } catch let error as DeliveryError {
            return .delivery(error.kind, error.reason)
        } catch {
            return .other(String(describing: error))
        }
    }

    var description: String {
        switch self {
        case .tokenInvalid(let reason): "PushTokenInvalid(\(reason))"
        case .delivery(let kind, let reason): "DeliveryError(\(kind), \(reason))"
        case .other(let error): "other(\(error))"
        }
    }
}

/// A clock the test moves by hand.
final class PushTestClock: Sendable {
    private let current: NIOLockedValueBox<Date>

    init(_ start: Date) {
        current = NIOLockedValueBox(start)
    }

    /// The clock as the `now` closure senders take.
    var now: @Sendable () -> Date {
        { [current] in current.withLockedValue { $0 } }
    }

    func advance(by seconds: TimeInterval) {
        current.withLockedValue { $0 += seconds }
    }
}

// MARK: - The APNs stand-in

/// How the APNs stand-in answers, with APNs' real status codes and reasons.
struct APNsStandInAnswer: Sendable {
    var status: HTTPResponse.Status
    var reason: String?

    static let ok = Self(status: .ok)
    static let unregistered = Self(status: .gone, reason: "Unregistered")
    static let expiredToken = Self(status: .gone, reason: "ExpiredToken")
    static let badDeviceToken = Self(status: .badRequest, reason: "BadDeviceToken")
    static let deviceTokenNotForTopic = Self(status: .badRequest, reason: "DeviceTokenNotForTopic")
    static let badTopic = Self(status: .badRequest, reason: "BadTopic")
    static let topicDisallowed = Self(status: .badRequest, reason: "TopicDisallowed")
    static let expiredProviderToken = Self(status: .forbidden, reason: "ExpiredProviderToken")
    static let invalidProviderToken = Self(status: .forbidden, reason: "InvalidProviderToken")
    static let payloadTooLarge = Self(status: .contentTooLarge, reason: "PayloadTooLarge")
    static let tooManyRequests = Self(status: .tooManyRequests, reason: "TooManyRequests")
    static let tooManyProviderTokenUpdates = Self(status: .tooManyRequests, reason: "TooManyProviderTokenUpdates")
    static let internalServerError = Self(status: .internalServerError, reason: "InternalServerError")
    static let serviceUnavailable = Self(status: .serviceUnavailable, reason: "ServiceUnavailable")

    /// The response: `apns-id` echoed, and for errors APNs' JSON body (`timestamp` in milliseconds for 410).
    func response(apnsID: String?) -> Response {
        var headers = HTTPFields()
        if let apnsID, let name = HTTPField.Name("apns-id") { headers[name] = apnsID }
        guard let reason else { return Response(status: status, headers: headers) }
        headers[.contentType] = "application/json"
        let body =
            status == .gone
            ? #"{"reason":"\#(reason)","timestamp":1800000000000}"#
            : #"{"reason":"\#(reason)"}"#
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// One request as the APNs stand-in saw it.
struct APNsStandInRequest: Sendable {
    var method: String
    var path: String
    var scheme: String?
    var authority: String?
    /// The type of the NIO channel the request arrived on: an HTTP/2 stream channel for HTTP/2.
    var channelType: String
    /// Header names lowercased; HTTP/2 pseudo-headers are in the fields above.
    var headers: [String: String]
    var body: [UInt8]
    var providerToken: APNsDecodedToken?
    /// The status the stand-in answered.
    var answered: Int
}

/// A provider token as the stand-in decoded it, independently of the sender's code.
struct APNsDecodedToken: @unchecked Sendable {
    var compact: String
    var header: [String: String]
    var claims: [String: Any]
    var signatureVerifies: Bool

    init?(_ compact: String, key: P256.Signing.PublicKey) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = decodeBase64URL(parts[0]),
            let claimBytes = decodeBase64URL(parts[1]), let signature = decodeBase64URL(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: String],
            let claims = try? JSONSerialization.jsonObject(with: claimBytes) as? [String: Any]
        else { return nil }
        self.compact = compact
        self.header = header
        self.claims = claims
        let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        self.signatureVerifies =
            ecdsa.map { key.isValidSignature($0, for: Data("\(parts[0]).\(parts[1])".utf8)) } ?? false
    }
}

/// Decodes unpadded base64url (RFC 4648 §5) with Foundation, independently of `Base64URL`.
func decodeBase64URL(_ text: String) -> Data? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return Data(base64Encoded: base64)
}

/// The request context of the stand-in: it notes which kind of channel carried the request.
struct APNsStandInContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channelType: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channelType = String(describing: type(of: source.channel))
    }
}

/// Replays scripted answers, then answers 200; records every request.
actor APNsStandInState {
    private var answers: [APNsStandInAnswer]
    private(set) var requests: [APNsStandInRequest] = []

    init(answers: [APNsStandInAnswer]) {
        self.answers = answers
    }

    func nextAnswer() -> APNsStandInAnswer {
        answers.isEmpty ? .ok : answers.removeFirst()
    }

    func record(_ request: APNsStandInRequest) {
        requests.append(request)
    }
}

/// What a test gets to talk to the stand-in.
struct APNsStandInEndpoint: Sendable {
    /// `https://127.0.0.1:<port>`.
    var baseURL: String
    /// An HTTP client with default settings (HTTP/2 by ALPN) that fails at once on a refused connection.
    var client: HTTPClient
    /// The stand-in's self-signed certificate (CN and subjectAltName 127.0.0.1).
    var certificatePEM: String
}

/// Runs `body` against an APNs stand-in: Hummingbird over HTTP/2 with TLS on 127.0.0.1, with a fresh certificate made
/// in memory. Like APNs, it refuses requests whose path is not `/3/device/<hex token>` (404 BadPath), that lack
/// a topic (400 MissingTopic), or whose provider token is missing or does not verify with `key` for the test team and
/// key IDs (403); it then replays `answers` and answers 200 once they run out. Returns what it saw.
func withAPNsStandIn(
    key: P256.Signing.PublicKey,
    answers: [APNsStandInAnswer] = [],
    _ body: (APNsStandInEndpoint) async throws -> Void
) async throws -> [APNsStandInRequest] {
    let served = try SelfSignedCertificate.make(trustAnchor: true)
    let der = Data(try served.certificate.toDERBytes())
    let certificatePEM =
        "-----BEGIN CERTIFICATE-----\n"
        + der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        + "\n-----END CERTIFICATE-----\n"
    var tls = TLSConfiguration.makeServerConfiguration(
        certificateChain: [.certificate(served.certificate)], privateKey: .privateKey(served.privateKey))
    tls.minimumTLSVersion = .tlsv12

    let state = APNsStandInState(answers: answers)
    let router = Router(context: APNsStandInContext.self)
    router.post("**") { request, context -> Response in
        let bytes = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let path = request.uri.path
        let authorization = headers["authorization"] ?? ""
        let providerToken =
            authorization.hasPrefix("bearer ")
            ? APNsDecodedToken(String(authorization.dropFirst("bearer ".count)), key: key) : nil

        let answer: APNsStandInAnswer
        if !path.hasPrefix("/3/device/") || !APNsPushSender.isDeviceToken(String(path.dropFirst(10))) {
            answer = APNsStandInAnswer(status: .notFound, reason: "BadPath")
        } else if authorization.isEmpty {
            answer = APNsStandInAnswer(status: .forbidden, reason: "MissingProviderToken")
        } else if let token = providerToken, token.signatureVerifies, token.header["kid"] == APNsPushSenderTests.keyID,
            token.claims["iss"] as? String == APNsPushSenderTests.teamID, token.claims["iat"] is Int
        {
            if headers["apns-topic"] == nil {
                answer = APNsStandInAnswer(status: .badRequest, reason: "MissingTopic")
            } else {
                answer = await state.nextAnswer()
            }
        } else {
            answer = .invalidProviderToken
        }
        await state.record(
            APNsStandInRequest(
                method: request.method.rawValue,
                path: path,
                scheme: request.head.scheme,
                authority: request.head.authority,
                channelType: context.channelType,
                headers: headers,
                body: Array(bytes.readableBytesView),
                providerToken: providerToken,
                answered: Int(answer.status.code)
            )
        )
        return answer.response(apnsID: headers["apns-id"])
    }

    try await withLoopbackServer(router: router, server: try .http2Upgrade(tlsConfiguration: tls)) { port in
        try await withNonRetryingHTTPClient { client in
            try await body(
                APNsStandInEndpoint(
                    baseURL: "https://127.0.0.1:\(port)", client: client, certificatePEM: certificatePEM))
        }
    }
    return await state.requests
}
