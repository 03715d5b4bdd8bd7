import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Drives ``TwilioSMSSender`` against a local Hummingbird stand-in that answers like Twilio's Messages API.
@Suite("TwilioSMSSender")
struct TwilioSMSSenderTests {
    static let accountSID = "AC0123456789abcdef0123456789abcdef"
    static let authToken = "twilio-auth-token-do-not-log"
    static let messagesPath = "/2010-04-01/Accounts/\(accountSID)/Messages.json"

    func message(to: String = "+14155550100", body: String = "Your Verity code is 123456") -> OutgoingMessage {
        OutgoingMessage(id: "msg_01TEST", channel: .sms, to: to, body: body)
    }

    func configuration(
        baseURL: String,
        from: String? = "+14155550123",
        messagingServiceSID: String? = nil,
        timeout: Duration = .seconds(15)
    ) -> TwilioConfiguration {
        TwilioConfiguration(
            accountSID: Self.accountSID,
            authToken: Self.authToken,
            from: from,
            messagingServiceSID: messagingServiceSID,
            baseURL: baseURL,
            timeout: timeout
        )
    }

    @Test("posts the form to the account's Messages.json with Basic auth")
    func postsFormWithBasicAuth() async throws {
        let text = "Your code: 123 456 & more=fun ünïcødé 🚀 +%"
        let logs = CapturedLogs()
        let recorded = try await withTwilioStandIn(.created) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL + "/"),
                provider: ProviderClient(httpClient: client, logger: logs.logger)
            )
            try await sender.send(message(body: text))
        }

        let request = try #require(recorded.only)
        #expect(request.method == "POST")
        #expect(request.path == Self.messagesPath)
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
        let authorization = try #require(request.headers["authorization"])
        #expect(authorization.hasPrefix("Basic "))
        let credentials = try #require(Data(base64Encoded: String(authorization.dropFirst("Basic ".count))))
        #expect(String(decoding: credentials, as: UTF8.self) == "\(Self.accountSID):\(Self.authToken)")
        // Twilio documents no idempotency header for creating messages: none is invented.
        #expect(request.headers["idempotency-key"] == nil)

        let raw = String(decoding: request.body, as: UTF8.self)
        #expect(raw.hasPrefix("To=%2B14155550100&From=%2B14155550123&Body="))
        let fields = try #require(decodeForm(raw))
        #expect(fields.map(\.name) == ["To", "From", "Body"])
        #expect(fields.map(\.value) == ["+14155550100", "+14155550123", text])

        let lines = logs.lines
        #expect(lines.contains { $0.contains("SM0123456789abcdef0123456789abcdef") }, "the message SID is logged")
        for line in lines {
            #expect(!line.contains(Self.authToken))
            #expect(!line.contains("14155550100"))
            #expect(!line.contains("123 456"))
        }
    }

    @Test("sends MessagingServiceSid instead of From")
    func messagingService() async throws {
        let recorded = try await withTwilioStandIn(.created) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL, from: nil, messagingServiceSID: "MG0123456789abcdef"),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test"))
            )
            try await sender.send(message())
        }
        let request = try #require(recorded.only)
        let fields = try #require(decodeForm(String(decoding: request.body, as: UTF8.self)))
        #expect(fields.map(\.name) == ["To", "MessagingServiceSid", "Body"])
        #expect(fields.first { $0.name == "MessagingServiceSid" }?.value == "MG0123456789abcdef")
        #expect(!fields.contains { $0.name == "From" })
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var answer: TwilioAnswer
        var kind: DeliveryError.Kind
        var reason: String
        var testDescription: String { "\(answer) → \(kind)" }
    }

    @Test(
        "maps Twilio's errors",
        arguments: [
            ErrorCase(answer: .invalidTo, kind: .permanent, reason: "twilio 400 21211"),
            ErrorCase(answer: .unauthorized, kind: .permanent, reason: "twilio 401 20003"),
            ErrorCase(answer: .tooManyRequests, kind: .transient, reason: "twilio 429 20429"),
            ErrorCase(answer: .unavailable, kind: .transient, reason: "twilio 503"),
            ErrorCase(answer: .internalError, kind: .transient, reason: "twilio 500 20500"),
        ]
    )
    func errorMapping(_ errorCase: ErrorCase) async throws {
        let logs = CapturedLogs()
        let recorded = try await withTwilioStandIn(errorCase.answer) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL),
                provider: ProviderClient(httpClient: client, logger: logs.logger))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == errorCase.kind)
            #expect(error?.reason == errorCase.reason)
        }
        #expect(recorded.count == 1, "a failed send is not retried inside the sender")
        for line in logs.lines {
            #expect(!line.contains(Self.authToken))
            #expect(!line.contains("14155550100"))
        }
    }

    @Test("a refused connection is transient")
    func connectionRefused() async throws {
        let port = try await loopbackPortWithNoListener()
        try await withNonRetryingHTTPClient { client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: "http://127.0.0.1:\(port)"),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test"))
            )
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.hasPrefix("twilio request failed") == true)
            #expect(error?.reason.contains(Self.authToken) == false)
        }
    }

    @Test("a slow answer times out as transient")
    func timeout() async throws {
        _ = try await withTwilioStandIn(.slow) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL, timeout: .milliseconds(300)),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test"))
            )
            // The stand-in answers only after the timeout: "timed out" is the sender's own timer firing, not a
            // slow answer accepted late (no wall-clock bound here: a busy machine may take longer to say it).
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.hasPrefix("twilio timed out") == true)
        }
    }

    @Test("without From or MessagingServiceSid nothing is sent and the failure is permanent")
    func unconfiguredSender() async throws {
        let recorded = try await withTwilioStandIn(.created) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL, from: "", messagingServiceSID: nil),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test"))
            )
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == .permanent)
        }
        #expect(recorded.isEmpty)
    }

    @Test("refuses email without sending")
    func refusesEmail() async throws {
        let recorded = try await withTwilioStandIn(.created) { baseURL, client in
            let sender = TwilioSMSSender(
                configuration: configuration(baseURL: baseURL),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test")))
            let email = OutgoingMessage(
                id: "msg_1", channel: .email, to: "a@example.com", subject: "Code", body: "123456")
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(email) }
            #expect(error?.kind == .permanent)
        }
        #expect(recorded.isEmpty)
    }

    @Test("form encoding follows application/x-www-form-urlencoded")
    func formEncoding() {
        #expect(FormEncoding.encode("+1 415") == "%2B1+415")
        #expect(FormEncoding.encode("a&b=c/d?e") == "a%26b%3Dc%2Fd%3Fe")
        #expect(FormEncoding.encode("AZaz09*-._~") == "AZaz09*-._%7E")
        #expect(FormEncoding.encode("é") == "%C3%A9")
        #expect(FormEncoding.encode([("To", "+1"), ("Body", "x y")]) == "To=%2B1&Body=x+y")
    }

    @Test("the configuration's description hides the auth token")
    func descriptionRedactsToken() {
        let description = "\(configuration(baseURL: "https://api.twilio.com"))"
        #expect(!description.contains(Self.authToken))
        #expect(description.contains(Self.accountSID))
    }
}

// MARK: - The Twilio stand-in

/// How the stand-in answers, with Twilio's real status codes and bodies.
enum TwilioAnswer: String, Sendable {
    case created, invalidTo, unauthorized, tooManyRequests, unavailable, internalError, slow

    var standIn: StandInAnswer {
        switch self {
        case .created, .slow:
            StandInAnswer(
                status: .created,
                contentType: Self.json,
                delay: self == .slow ? .seconds(1) : nil,
                body: """
                    {"account_sid":"\(TwilioSMSSenderTests.accountSID)","api_version":"2010-04-01",\
                    "body":"redacted","direction":"outbound-api","error_code":null,"error_message":null,\
                    "from":"+14155550123","messaging_service_sid":null,"num_segments":"1",\
                    "sid":"SM0123456789abcdef0123456789abcdef","status":"queued","to":"+14155550100",\
                    "uri":"/2010-04-01/Accounts/\(TwilioSMSSenderTests.accountSID)/Messages/SM0123456789abcdef0123456789abcdef.json"}
                    """
            )
        case .invalidTo:
            StandInAnswer(
                status: .badRequest,
                contentType: Self.json,
                body: """
                    {"code":21211,"message":"The 'To' number +14155550100 is not a valid phone number.",\
                    "more_info":"https://www.twilio.com/docs/errors/21211","status":400}
                    """
            )
        case .unauthorized:
            StandInAnswer(
                status: .unauthorized,
                contentType: Self.json,
                body: """
                    {"code":20003,"message":"Authenticate","more_info":"https://www.twilio.com/docs/errors/20003","status":401}
                    """
            )
        case .tooManyRequests:
            StandInAnswer(
                status: .tooManyRequests,
                contentType: Self.json,
                body: """
                    {"code":20429,"message":"Too Many Requests","more_info":"https://www.twilio.com/docs/errors/20429",\
                    "status":429}
                    """
            )
        case .internalError:
            StandInAnswer(
                status: .internalServerError,
                contentType: Self.json,
                body: """
                    {"code":20500,"message":"Internal Server Error",\
                    "more_info":"https://www.twilio.com/docs/errors/20500","status":500}
                    """
            )
        case .unavailable:
            StandInAnswer(
                status: .serviceUnavailable,
                contentType: "text/html",
                body: "<html><body>Service Unavailable</body></html>"
            )
        }
    }

    static let json = "application/json; charset=utf-8"
}

/// Runs `body` against a Twilio stand-in that answers every request with `answer`.
func withTwilioStandIn(
    _ answer: TwilioAnswer,
    _ body: (_ baseURL: String, _ client: HTTPClient) async throws -> Void
) async throws -> [StandInRequest] {
    try await withStandIn(answer: answer.standIn, body)
}

// MARK: - Stand-in support (also used by WebhookSMSSenderTests)

/// One request as a stand-in saw it; header names are lowercased.
struct StandInRequest: Sendable {
    var method: String
    var path: String
    var query: String?
    var headers: [String: String]
    var body: [UInt8]
}

/// Collects the requests a stand-in receives.
actor StandInRecorder {
    private(set) var requests: [StandInRequest] = []

    func record(_ request: StandInRequest) { requests.append(request) }
}

extension Array where Element == StandInRequest {
    /// The single request, or `nil` when there were none or several.
    var only: StandInRequest? { count == 1 ? first : nil }
}

/// What a stand-in answers to every request.
struct StandInAnswer: Sendable {
    var status: HTTPResponse.Status
    var contentType: String?
    /// How long to wait before answering.
    var delay: Duration?
    var body: String

    init(status: HTTPResponse.Status, contentType: String? = nil, delay: Duration? = nil, body: String = "") {
        self.status = status
        self.contentType = contentType
        self.delay = delay
        self.body = body
    }

    var response: Response {
        var headers = HTTPFields()
        if let contentType { headers[.contentType] = contentType }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Runs `body` with the base URL of a fresh stand-in on 127.0.0.1 and an HTTP client; returns what the stand-in saw.
///
/// The stand-in records every request to any path, then answers with `answer`.
func withStandIn(
    answer: StandInAnswer,
    _ body: (_ baseURL: String, _ client: HTTPClient) async throws -> Void
) async throws -> [StandInRequest] {
    try await withSequenceStandIn([answer], body)
}

/// Runs `body` against a stand-in that answers its requests with `answers` in turn (the last one from then on).
func withSequenceStandIn(
    _ answers: [StandInAnswer], _ body: (_ baseURL: String, _ client: HTTPClient) async throws -> Void
) async throws -> [StandInRequest] {
    let recorder = StandInRecorder()
    let router = Router()
    router.post("**") { request, _ -> Response in
        let bytes = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        await recorder.record(
            StandInRequest(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query, headers: headers,
                body: Array(bytes.readableBytesView)))
        let answer = answers[max(min(await recorder.requests.count, answers.count) - 1, 0)]
        if let delay = answer.delay { try await Task.sleep(for: delay) }
        return answer.response
    }
    try await withLoopbackServer(router: router) { port in
        try await withNonRetryingHTTPClient { client in try await body("http://127.0.0.1:\(port)", client) }
    }
    return await recorder.requests
}

/// A loopback port that nothing listens on: one a stand-in had, after it stopped.
func loopbackPortWithNoListener() async throws -> Int {
    let box = PortBox()
    try await withLoopbackServer(router: Router()) { port in await box.set(port) }
    return try #require(await box.port)
}

private actor PortBox {
    private(set) var port: Int?

    func set(_ port: Int) { self.port = port }
}

/// Runs a Hummingbird application bound to 127.0.0.1 on a free port for the duration of `body`, then stops it.
/// `server` picks the protocol (HTTP/1.1 by default; the APNs stand-in speaks HTTP/2 over TLS).
func withLoopbackServer<Router: HTTPResponderBuilder>(
    router: Router, server: HTTPServerBuilder = .http1(), _ body: (_ port: Int) async throws -> Void
) async throws where Router.Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    var serverLogger = Logger(label: "stand-in")
    serverLogger.logLevel = .warning
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router,
        server: server,
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            if let port = channel.localAddress?.port { portContinuation.yield(port) }
            portContinuation.finish()
        },
        logger: serverLogger
    )
    let services = ServiceGroup(
        configuration: .init(services: [app], gracefulShutdownSignals: [], logger: serverLogger)
    )
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { portContinuation.finish() }
            try await services.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await group.waitForAll()
            throw StandInError.didNotStart
        }
        do {
            try await body(port)
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}

enum StandInError: Error {
    case didNotStart
}

/// Runs `body` with a private HTTP client that fails at once when a connection is refused, then shuts it down.
func withNonRetryingHTTPClient(_ body: (HTTPClient) async throws -> Void) async throws {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        try await body(client)
    } catch {
        try await client.shutdown()
        throw error
    }
    try await client.shutdown()
}

/// Decodes `application/x-www-form-urlencoded` independently of the sender: `+` is a space, `%XX` a byte.
func decodeForm(_ string: String) -> [(name: String, value: String)]? {
    func decode(_ part: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = part.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            default:
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: .utf8)
    }
    var fields: [(name: String, value: String)] = []
    for pair in string.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let name = decode(parts[0]), let value = decode(parts[1]) else { return nil }
        fields.append((name, value))
    }
    return fields
}

// MARK: - Log capture

/// Collects every log line, metadata included, so tests can check that nothing secret is logged.
struct CapturedLogs: Sendable {
    private let capture = LogCapture()

    /// A logger at trace level that writes here.
    var logger: Logger {
        var logger = Logger(label: "capture") { [capture] _ in capture }
        logger.logLevel = .trace
        return logger
    }

    /// Every line logged so far.
    var lines: [String] { capture.lines }
}
