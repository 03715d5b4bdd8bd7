import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Providers' delivery-status callbacks, signed as Meta and Twilio sign them: a late permanent failure gives the
/// message up and sends its code by the project's fallback channel, once; anything unsigned changes nothing.
@Suite("Delivery-status callbacks")
struct DeliveryStatusCallbackTests {
    let phone = "+14155550100"
    static let appSecret = "meta-app-secret-for-tests"
    static let verifyToken = "meta-verify-token-for-tests"
    static let authToken = "twilio-auth-token-for-tests"
    static let publicURL = "https://verity.example.com"

    static func node(_ engine: TestEngine, fallback: VerityCore.Channel? = .sms) async throws -> TestNode {
        for secret in [appSecret, verifyToken, authToken] { LeakWatch.secret(secret) }
        return try await TestNode.make(
            engine, settings: ProjectSettings(disabledChannels: [], fallbackChannel: fallback),
            configure: {
                $0.publicURL = publicURL
                $0.deliveryStatus = DeliveryStatusSettings(
                    metaAppSecret: appSecret, metaVerifyToken: verifyToken, twilioAuthToken: authToken)
            })
    }

    // MARK: Meta's wire format

    /// A WhatsApp Business Account notification with one status, as Meta posts it.
    static func metaStatus(id: String, status: String, errorCode: Int? = nil) -> String {
        let errors =
            errorCode.map {
                #","errors":[{"code":\#($0),"title":"Message undeliverable","message":"Message undeliverable","#
                    + #""error_data":{"details":"Message Undeliverable."}}]"#
            } ?? ""
        return #"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"#
            + #""messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","#
            + #""phone_number_id":"106540352242922"},"statuses":[{"id":"\#(id)","status":"\#(status)","#
            + #""timestamp":"1750263773","recipient_id":"14155550100"\#(errors)}]},"field":"messages"}]}]}"#
    }

    static func metaSignature(_ body: String, secret: String = appSecret) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + Hex.encode(mac)
    }

    static func postMeta(_ body: String, signature: String?, client: some TestClientProtocol) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let signature, let name = HTTPField.Name("X-Hub-Signature-256") { headers[name] = signature }
        return try await client.execute(
            uri: "/v1/delivery-status/whatsapp-cloud", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Starts a WhatsApp verification whose message Meta accepts as `wamid`; waits until it counts as sent.
    func sentWhatsApp(node: TestNode, client: some TestClientProtocol, wamid: String) async throws -> String {
        node.sender.answerNext(providerMessageIds: wamid)
        let id = try await client.startVerification(phone, channel: "whatsapp", key: node.apiKey)
            .decode(VerificationResponse.self).id
        try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .sent }
        let stored = try #require(try await node.verity.outbox.messages().first?.message)
        #expect(stored.providerMessageId == wamid)
        return id
    }

    @Test(
        "Meta's signed report that a WhatsApp message failed for good sends the same code by the fallback channel",
        arguments: TestEngine.available)
    func metaFailedFallsBack(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let wamid = "wamid.HBgLMTQxNTU1NTAxMDAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA"
            let id = try await sentWhatsApp(node: node, client: client, wamid: wamid)
            let whatsapp = try #require(node.sender.messages(to: phone).first)
            let body = Self.metaStatus(id: wamid, status: "failed", errorCode: 131026)
            let response = try await Self.postMeta(body, signature: Self.metaSignature(body), client: client)
            #expect(response.status == .ok)

            let sms = try #require(try await node.sender.waitForMessages(to: phone, count: 2).last)
            #expect(sms.channel == .sms)
            #expect(RecordingSender.code(in: sms) == RecordingSender.code(in: whatsapp))
            let stored = try await node.verity.outbox.messages().map(\.message)
            let failed = try #require(stored.first { $0.channel == .whatsapp })
            #expect(failed.status == .dead && failed.lastError == "meta failed 131026")
            let verification = try await client.send(.get, "/v1/verifications/\(id)", key: node.apiKey)
                .decode(VerificationResponse.self)
            #expect(verification.channel == .sms && verification.sendAttempts == 2)
            let code = try #require(RecordingSender.code(in: sms))
            #expect(
                try await client.check(id: id, code: code, key: node.apiKey)
                    .decode(CheckVerificationResponse.self).valid)
            #expect(!node.logs.text.contains(Self.appSecret))
        }
    }

    @Test("The same failure reported twice, even at once, falls back once", arguments: TestEngine.available)
    func metaDuplicateFallsBackOnce(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let wamid = "wamid.duplicate"
            _ = try await sentWhatsApp(node: node, client: client, wamid: wamid)
            let body = Self.metaStatus(id: wamid, status: "failed", errorCode: 131026)
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await Self.postMeta(body, signature: Self.metaSignature(body), client: client).status
                    }
                }
                for try await status in group { #expect(status == .ok) }
            }
            let again = try await Self.postMeta(body, signature: Self.metaSignature(body), client: client)
            #expect(again.status == .ok)
            try await node.sender.waitForMessages(to: phone, count: 2)
            try await Task.sleep(for: .milliseconds(100))
            #expect(node.sender.messages(to: phone).count == 2)
            let stored = try await node.verity.outbox.messages().map(\.message)
            #expect(stored.count == 2)
            #expect(stored.filter { $0.channel == .sms }.count == 1)
        }
    }

    @Test(
        "A bad or missing signature is refused and changes nothing",
        arguments: TestEngine.available, ["sha256=" + String(repeating: "0", count: 64), "garbage", nil])
    func metaBadSignature(engine: TestEngine, signature: String?) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let wamid = "wamid.badsignature"
            _ = try await sentWhatsApp(node: node, client: client, wamid: wamid)
            let body = Self.metaStatus(id: wamid, status: "failed", errorCode: 131026)
            let refused = try await Self.postMeta(body, signature: signature, client: client)
            #expect(refused.status == .badRequest)
            #expect(try refused.problem().code == ErrorCode.invalidSignature.rawValue)
            // Signed with another secret, or over another body: refused too.
            let otherSecret = try await Self.postMeta(
                body, signature: Self.metaSignature(body, secret: "not-the-app-secret"), client: client)
            #expect(otherSecret.status == .badRequest)
            let otherBody = try await Self.postMeta(
                body, signature: Self.metaSignature(body + " "), client: client)
            #expect(otherBody.status == .badRequest)
            try await Task.sleep(for: .milliseconds(100))
            let stored = try await node.verity.outbox.messages().map(\.message)
            #expect(stored.count == 1 && stored.first?.status == .sent)
            #expect(node.sender.messages(to: phone).count == 1)
        }
    }

    @Test(
        "Sent, delivered and read, a temporary failure and an unknown message id change nothing",
        arguments: TestEngine.available)
    func metaNothingToDo(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let wamid = "wamid.delivered"
            _ = try await sentWhatsApp(node: node, client: client, wamid: wamid)
            for body in [
                Self.metaStatus(id: wamid, status: "sent"), Self.metaStatus(id: wamid, status: "delivered"),
                Self.metaStatus(id: wamid, status: "read"),
                Self.metaStatus(id: wamid, status: "failed", errorCode: 130429),
                Self.metaStatus(id: "wamid.someone-elses", status: "failed", errorCode: 131026),
            ] {
                let response = try await Self.postMeta(body, signature: Self.metaSignature(body), client: client)
                #expect(response.status == .ok)
            }
            try await Task.sleep(for: .milliseconds(100))
            let stored = try await node.verity.outbox.messages().map(\.message)
            #expect(stored.count == 1 && stored.first?.status == .sent)
            #expect(node.sender.messages(to: phone).count == 1)
        }
    }

    @Test(
        "Without a fallback channel a failed message is given up, and nothing more is sent",
        arguments: TestEngine.available)
    func metaFailedWithoutFallback(engine: TestEngine) async throws {
        let node = try await Self.node(engine, fallback: nil)
        try await node.run { client in
            let wamid = "wamid.nofallback"
            _ = try await sentWhatsApp(node: node, client: client, wamid: wamid)
            let body = Self.metaStatus(id: wamid, status: "failed", errorCode: 131026)
            #expect(try await Self.postMeta(body, signature: Self.metaSignature(body), client: client).status == .ok)
            let stored = try await node.verity.outbox.messages().map(\.message)
            #expect(stored.count == 1 && stored.first?.status == .dead)
            try await Task.sleep(for: .milliseconds(100))
            #expect(node.sender.messages(to: phone).count == 1)
        }
    }

    @Test(
        "Meta's subscription check gets its challenge back only with the verify token", arguments: TestEngine.available)
    func metaSubscription(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let path = "/v1/delivery-status/whatsapp-cloud"
            let good = try await client.send(
                .get, "\(path)?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=\(Self.verifyToken)",
                key: nil)
            #expect(good.status == .ok)
            #expect(String(buffer: good.body) == "1158201444")
            #expect(good.headers[.contentType]?.hasPrefix("text/plain") == true)
            let wrong = try await client.send(
                .get, "\(path)?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guess", key: nil)
            #expect(wrong.status == .forbidden)
            #expect(try wrong.problem().code == ErrorCode.forbidden.rawValue)
            let missing = try await client.send(.get, "\(path)?hub.mode=subscribe&hub.challenge=1", key: nil)
            #expect(missing.status == .forbidden)
        }
    }

    @Test("Without an app secret Meta's callbacks are refused", arguments: TestEngine.available)
    func metaNotConfigured(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let body = Self.metaStatus(id: "wamid.x", status: "failed", errorCode: 131026)
            let response = try await Self.postMeta(body, signature: Self.metaSignature(body), client: client)
            #expect(response.status == .notFound)
        }
    }

    @Test(
        "An unconfigured or unsigned callback is refused before its body is read; Twilio's is capped at 64 KiB",
        arguments: TestEngine.available)
    func refusedBeforeReading(engine: TestEngine) async throws {
        let huge = String(repeating: "a", count: 4 * 1024 * 1024)
        let unconfigured = try await TestNode.make(engine)
        try await unconfigured.run { client in
            let meta = try await Self.postMeta(huge, signature: "sha256=00", client: client)
            #expect(meta.status == .notFound)
            let twilio = try await Self.postTwilio([("Body", huge)], signature: "x", client: client)
            #expect(twilio.status == .notFound)
        }
        let node = try await Self.node(engine)
        try await node.run { client in
            let meta = try await Self.postMeta(huge, signature: nil, client: client)
            #expect(meta.status == .badRequest)
            #expect(try meta.problem().code == "invalid_signature")
            let unsigned = try await Self.postTwilio([("Body", huge)], signature: nil, client: client)
            #expect(try unsigned.problem().code == "invalid_signature")
            let parameters =
                Self.messageStatus(sid: "SMx", status: "failed") + [("Body", String(repeating: "a", count: 70_000))]
            let large = try await Self.postTwilio(
                parameters, signature: Self.twilioSignature(parameters), client: client)
            #expect(large.status == .contentTooLarge)
        }
    }

    // MARK: Twilio's wire format

    static func postTwilio(
        _ parameters: [(String, String)], signature: String?, client: some TestClientProtocol
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        if let signature, let name = HTTPField.Name("X-Twilio-Signature") { headers[name] = signature }
        return try await client.execute(
            uri: "/v1/delivery-status/twilio", method: .post, headers: headers,
            body: ByteBuffer(string: FormEncoding.encode(parameters)))
    }

    /// Twilio's signature, computed from its documented recipe rather than Verity's helper.
    static func twilioSignature(_ parameters: [(String, String)], token: String = authToken) -> String {
        let url = "\(publicURL)/v1/delivery-status/twilio"
        let data = parameters.sorted { $0.0 < $1.0 }.map { $0.0 + $0.1 }.joined()
        let mac = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data((url + data).utf8), using: SymmetricKey(data: Data(token.utf8)))
        return Data(mac).base64EncodedString()
    }

    static func messageStatus(sid: String, status: String, errorCode: String? = nil) -> [(String, String)] {
        var parameters = [
            ("AccountSid", "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"), ("ApiVersion", "2010-04-01"),
            ("From", "whatsapp:+15005550006"), ("MessageSid", sid), ("MessageStatus", status), ("SmsSid", sid),
            ("SmsStatus", status), ("To", "whatsapp:+14155550100"),
        ]
        if let errorCode { parameters.append(("ErrorCode", errorCode)) }
        return parameters
    }

    @Test(
        "Twilio's signed report that a message was undelivered falls back once; other statuses change nothing",
        arguments: TestEngine.available)
    func twilioUndeliveredFallsBack(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let sid = "SM1f0e8ae6ade43cb3c0ce4525424e404f"
            _ = try await sentWhatsApp(node: node, client: client, wamid: sid)
            for status in ["queued", "sent", "delivered", "read"] {
                let parameters = Self.messageStatus(sid: sid, status: status)
                let response = try await Self.postTwilio(
                    parameters, signature: Self.twilioSignature(parameters), client: client)
                #expect(response.status == .ok)
            }
            #expect(try await node.verity.outbox.messages().first?.message.status == .sent)

            let undelivered = Self.messageStatus(sid: sid, status: "undelivered", errorCode: "63024")
            let badlySigned = try await Self.postTwilio(
                undelivered, signature: Self.twilioSignature(undelivered, token: "wrong"), client: client)
            #expect(badlySigned.status == .badRequest)
            #expect(try badlySigned.problem().code == ErrorCode.invalidSignature.rawValue)
            let unsigned = try await Self.postTwilio(undelivered, signature: nil, client: client)
            #expect(unsigned.status == .badRequest)
            #expect(try await node.verity.outbox.messages().first?.message.status == .sent)

            for _ in 0..<2 {
                let response = try await Self.postTwilio(
                    undelivered, signature: Self.twilioSignature(undelivered), client: client)
                #expect(response.status == .ok)
            }
            let sms = try #require(try await node.sender.waitForMessages(to: phone, count: 2).last)
            #expect(sms.channel == .sms)
            try await Task.sleep(for: .milliseconds(100))
            let stored = try await node.verity.outbox.messages().map(\.message)
            #expect(stored.count == 2)
            #expect(stored.first { $0.channel == .whatsapp }?.lastError == "twilio undelivered 63024")
        }
    }

    @Test("A call nobody answered falls back to SMS", arguments: TestEngine.available)
    func twilioCallNoAnswer(engine: TestEngine) async throws {
        let node = try await Self.node(engine)
        try await node.run { client in
            let sid = "CA2c5cd2bd5fd1f7b9b4d4c4ad1c0b5d4e"
            node.sender.answerNext(providerMessageIds: sid)
            _ = try await client.startVerification(phone, channel: "voice", key: node.apiKey)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .sent }
            let parameters = [
                ("AccountSid", "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"), ("CallSid", sid), ("CallStatus", "no-answer"),
                ("Direction", "outbound-api"), ("To", phone),
            ]
            let response = try await Self.postTwilio(
                parameters, signature: Self.twilioSignature(parameters), client: client)
            #expect(response.status == .ok)
            let sms = try #require(try await node.sender.waitForMessages(to: phone, count: 2).last)
            #expect(sms.channel == .sms)
        }
    }
}

/// What the senders give the callbacks: the provider's id from its real answer, and Twilio's `StatusCallback`.
@Suite("Provider message ids and status callback settings")
struct ProviderMessageIdTests {
    @Test("Meta's answer gives the wamid; Twilio's gives the SID and is asked for status callbacks")
    func idsFromAnswers() async throws {
        var wamid: String?
        _ = try await withStandIn(answer: VoiceWhatsAppSenderTests.metaAccepted) { baseURL, client in
            let sender = MetaWhatsAppSender(
                configuration: VoiceWhatsAppSenderTests.meta(baseURL),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test")))
            wamid = try await sender.submit(VoiceWhatsAppSenderTests.whatsapp())
        }
        #expect(wamid == "wamid.HBgLMTQxNTU1NTAxMDAVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA")

        var sid: String?
        let callback = "https://verity.example.com/v1/delivery-status/twilio"
        let recorded = try await withStandIn(answer: TwilioAnswer.created.standIn) { baseURL, client in
            var account = VoiceWhatsAppSenderTests.twilio(baseURL, from: "whatsapp:+14155550123")
            account.statusCallbackURL = callback
            let sender = TwilioWhatsAppSender(
                configuration: TwilioWhatsAppConfiguration(account: account, contentSID: "HX0"),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test")))
            sid = try await sender.submit(VoiceWhatsAppSenderTests.whatsapp())
        }
        #expect(sid == "SM0123456789abcdef0123456789abcdef")
        let request = try #require(recorded.only)
        let fields = try #require(decodeForm(String(decoding: request.body, as: UTF8.self)))
        #expect(fields.last?.name == "StatusCallback" && fields.last?.value == callback)
    }

    @Test("The environment names the Meta secrets; Twilio's token and callback URL come with a public URL")
    func configuration() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(environment: [
            "VERITY_WHATSAPP_APP_SECRET": "app-secret", "VERITY_WHATSAPP_VERIFY_TOKEN": "verify-token",
            "VERITY_VOICE_SENDER": "twilio", "VERITY_TWILIO_VOICE_FROM": "+15005550006",
            "VERITY_TWILIO_ACCOUNT_SID": "AC123", "VERITY_TWILIO_AUTH_TOKEN": "auth-token",
        ])
        #expect(configuration.deliveryStatus.metaAppSecret == "app-secret")
        #expect(configuration.deliveryStatus.metaVerifyToken == "verify-token")
        #expect(configuration.deliveryStatus.twilioAuthToken == "auth-token")
        #expect(configuration.twilioStatusCallbackURL == nil)
        let description = "\(configuration.deliveryStatus)"
        #expect(!description.contains("app-secret") && !description.contains("verify-token"))
        #expect(!description.contains("auth-token"))
        configuration.publicURL = "https://verity.example.com/"
        #expect(configuration.twilioStatusCallbackURL == "https://verity.example.com/v1/delivery-status/twilio")
    }
}
