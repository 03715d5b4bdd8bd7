import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Drives ``WebhookSMSSender`` against a local Hummingbird stand-in for a customer's SMS gateway.
///
/// The stand-in helpers (`withStandIn`, `withNonRetryingHTTPClient`, `CapturedLogs`, …) live in
/// TwilioSMSSenderTests.swift.
@Suite("WebhookSMSSender")
struct WebhookSMSSenderTests {
    static let secret = "whsec_webhook-secret-do-not-log"
    static let signedAt = Date(timeIntervalSince1970: 1_700_000_000)
    static let text = #"Your Verity code is 123456 — "quoted" / slash & ünïcødé 🚀"#

    func message(channel: VerityCore.Channel = .sms) -> OutgoingMessage {
        OutgoingMessage(id: "msg_01WEBHOOK", channel: channel, to: "+14155550100", body: Self.text)
    }

    func sender(
        url: String, client: HTTPClient, logger: Logger = Logger(label: "test"), timeout: Duration = .seconds(15)
    )
        -> WebhookSMSSender
    {
        WebhookSMSSender(
            configuration: WebhookSMSConfiguration(url: url, secret: Self.secret, timeout: timeout),
            provider: ProviderClient(httpClient: client, logger: logger, now: { Self.signedAt })
        )
    }

    @Test("posts signed JSON with the message id")
    func postsSignedJSON() async throws {
        let logs = CapturedLogs()
        let recorded = try await withStandIn(answer: StandInAnswer(status: .accepted)) { baseURL, client in
            try await sender(url: baseURL + "/hooks/sms?tenant=acme", client: client, logger: logs.logger)
                .send(message())
        }

        let request = try #require(recorded.only)
        #expect(request.method == "POST")
        #expect(request.path == "/hooks/sms")
        #expect(request.query == "tenant=acme")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["verity-message-id"] == "msg_01WEBHOOK")

        let json = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String]
        #expect(json == ["id": "msg_01WEBHOOK", "channel": "sms", "to": "+14155550100", "body": Self.text])

        let signature = try #require(request.headers["verity-signature"])
        let parts = signature.split(separator: ",")
        #expect(parts.count == 2)
        #expect(parts.first == "t=1700000000")
        let mac = try #require(parts.last?.split(separator: "=", maxSplits: 1).last)
        #expect(parts.last?.hasPrefix("v1=") == true)
        #expect(mac.count == 64)
        #expect(mac.allSatisfy { "0123456789abcdef".contains($0) })

        let body = request.body
        #expect(WebhookSignature.verify(header: signature, secret: Self.secret, body: body, now: Self.signedAt))
        #expect(!WebhookSignature.verify(header: signature, secret: "wrong", body: body, now: Self.signedAt))
        var tampered = body
        tampered[tampered.count - 3] ^= 0x01
        #expect(!WebhookSignature.verify(header: signature, secret: Self.secret, body: tampered, now: Self.signedAt))
        let late = Self.signedAt.addingTimeInterval(301)
        #expect(!WebhookSignature.verify(header: signature, secret: Self.secret, body: body, now: late))

        for line in logs.lines {
            #expect(!line.contains(Self.secret))
            #expect(!line.contains("14155550100"))
            #expect(!line.contains("123456"))
        }
    }

    struct StatusCase: Sendable, CustomTestStringConvertible {
        var status: Int
        /// `nil` for success.
        var kind: DeliveryError.Kind?
        var testDescription: String { "\(status) → \(kind.map { "\($0)" } ?? "success")" }
    }

    @Test(
        "maps the gateway's status",
        arguments: [
            StatusCase(status: 200, kind: nil), StatusCase(status: 201, kind: nil),
            StatusCase(status: 202, kind: nil), StatusCase(status: 204, kind: nil),
            StatusCase(status: 400, kind: .permanent), StatusCase(status: 401, kind: .permanent),
            StatusCase(status: 404, kind: .permanent), StatusCase(status: 422, kind: .permanent),
            StatusCase(status: 408, kind: .transient), StatusCase(status: 429, kind: .transient),
            StatusCase(status: 500, kind: .transient), StatusCase(status: 503, kind: .transient),
        ]
    )
    func statusMapping(_ statusCase: StatusCase) async throws {
        let answer = StandInAnswer(
            status: .init(code: statusCase.status),
            contentType: "application/json",
            body: statusCase.status == 204 ? "" : #"{"error":"gateway says no"}"#
        )
        let recorded = try await withStandIn(answer: answer) { baseURL, client in
            let sender = sender(url: baseURL + "/sms", client: client)
            if let kind = statusCase.kind {
                let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
                #expect(error?.kind == kind)
                #expect(error?.reason == "webhook \(statusCase.status)")
            } else {
                try await sender.send(message())
            }
        }
        #expect(recorded.count == 1)
    }

    @Test("a refused connection is transient")
    func connectionRefused() async throws {
        let port = try await loopbackPortWithNoListener()
        try await withNonRetryingHTTPClient { client in
            let sender = sender(url: "http://127.0.0.1:\(port)/sms", client: client)
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == .transient)
        }
    }

    @Test("a slow gateway times out as transient")
    func timeout() async throws {
        _ = try await withStandIn(answer: StandInAnswer(status: .ok, delay: .seconds(1))) { baseURL, client in
            let sender = sender(url: baseURL + "/sms", client: client, timeout: .milliseconds(300))
            // The stand-in answers only after the timeout: "timed out" is the sender's own timer firing, not a
            // slow answer accepted late (no wall-clock bound here: a busy machine may take longer to say it).
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message()) }
            #expect(error?.kind == .transient)
            #expect(error?.reason.hasPrefix("webhook timed out") == true)
        }
    }

    @Test("a URL that is not absolute http(s) is permanent", arguments: ["ftp://example.com/sms", "not a url", "/sms"])
    func invalidURL(_ url: String) async throws {
        try await withNonRetryingHTTPClient { client in
            let error = await #expect(throws: DeliveryError.self) {
                try await sender(url: url, client: client).send(message())
            }
            #expect(error?.kind == .permanent)
        }
    }

    @Test("refuses email without sending")
    func refusesEmail() async throws {
        let recorded = try await withStandIn(answer: StandInAnswer(status: .ok)) { baseURL, client in
            let error = await #expect(throws: DeliveryError.self) {
                try await sender(url: baseURL, client: client).send(message(channel: .email))
            }
            #expect(error?.kind == .permanent)
        }
        #expect(recorded.isEmpty)
    }

    @Test("the configuration's description hides the secret")
    func descriptionRedactsSecret() {
        let configuration = WebhookSMSConfiguration(url: "https://sms.example.com/hook?token=abc", secret: Self.secret)
        #expect(!"\(configuration)".contains(Self.secret))
        #expect(!"\(configuration)".contains("token=abc"))
    }
}

@Suite("WebhookSignature")
struct WebhookSignatureTests {
    static let secret = "whsec_test"
    static let body = Array(#"{"a":1}"#.utf8)
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    /// HMAC-SHA256("whsec_test", "1700000000.{"a":1}"), computed independently with Python's hmac module.
    static let expected = "t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789"

    @Test("signs \"<t>.<body>\" with HMAC-SHA256 in lowercase hex")
    func knownVector() {
        #expect(
            WebhookSignature.header(secret: Self.secret, timestamp: 1_700_000_000, body: Self.body) == Self.expected)
    }

    @Test("verifies its own signature within the tolerance")
    func verifies() {
        #expect(WebhookSignature.verify(header: Self.expected, secret: Self.secret, body: Self.body, now: Self.now))
        for offset in [-300.0, -1, 1, 299.5, 300] {
            #expect(
                WebhookSignature.verify(
                    header: Self.expected,
                    secret: Self.secret,
                    body: Self.body,
                    now: Self.now.addingTimeInterval(offset)
                )
            )
        }
        let uppercase = "t=1700000000,v1=38877139021993B830AF32FEEA6E18A8DA83EB2F6E49EE50BD9E4CF4CA4D3789"
        #expect(WebhookSignature.verify(header: uppercase, secret: Self.secret, body: Self.body, now: Self.now))
        #expect(
            WebhookSignature.verify(header: Self.expected, secret: Self.secret, body: Data(Self.body), now: Self.now)
        )
    }

    @Test("rejects a wrong secret, a changed body, and a timestamp outside the tolerance")
    func rejects() {
        #expect(!WebhookSignature.verify(header: Self.expected, secret: "whsec_other", body: Self.body, now: Self.now))
        #expect(
            !WebhookSignature.verify(
                header: Self.expected,
                secret: Self.secret,
                body: Array(#"{"a":2}"#.utf8),
                now: Self.now
            )
        )
        #expect(!WebhookSignature.verify(header: Self.expected, secret: Self.secret, body: [], now: Self.now))
        for offset in [-301.0, 301, 86_400] {
            #expect(
                !WebhookSignature.verify(
                    header: Self.expected,
                    secret: Self.secret,
                    body: Self.body,
                    now: Self.now.addingTimeInterval(offset)
                )
            )
        }
        #expect(
            WebhookSignature.verify(
                header: Self.expected,
                secret: Self.secret,
                body: Self.body,
                now: Self.now.addingTimeInterval(3_600),
                tolerance: 3_600
            )
        )
        // The timestamp is signed: moving it forward breaks the signature.
        let replayed = Self.expected.replacingOccurrences(of: "t=1700000000", with: "t=1700000600")
        #expect(
            !WebhookSignature.verify(
                header: replayed,
                secret: Self.secret,
                body: Self.body,
                now: Self.now.addingTimeInterval(600)
            )
        )
    }

    @Test(
        "rejects malformed headers",
        arguments: [
            "",
            "v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
            "t=1700000000",
            "t=1700000000,v1=",
            "t=1700000000,v1=zz877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
            "t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d378",
            "t=1700000000,v0=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
            "t=abc,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
            "t=1700000000,t=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
            "t=1700000000;v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789",
        ]
    )
    func malformed(_ header: String) {
        #expect(!WebhookSignature.verify(header: header, secret: Self.secret, body: Self.body, now: Self.now))
    }

    @Test("accepts any matching v1, for secret rotation, and ignores unknown schemes")
    func rotation() {
        let old = WebhookSignature.header(secret: "whsec_old", timestamp: 1_700_000_000, body: Self.body)
        let oldMAC = old.split(separator: ",")[1]
        let header = "\(Self.expected),\(oldMAC),v0=deadbeef"
        #expect(WebhookSignature.verify(header: header, secret: Self.secret, body: Self.body, now: Self.now))
        #expect(WebhookSignature.verify(header: header, secret: "whsec_old", body: Self.body, now: Self.now))
        #expect(!WebhookSignature.verify(header: header, secret: "whsec_other", body: Self.body, now: Self.now))
    }
}
