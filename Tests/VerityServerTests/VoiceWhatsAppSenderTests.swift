import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// Drives the call and WhatsApp senders against local Hummingbird stand-ins that answer like Twilio's Calls and
/// Messages APIs, Meta's WhatsApp Cloud API and a customer's voice gateway.
///
/// The stand-in helpers (`withStandIn`, `withNonRetryingHTTPClient`, `decodeForm`, `CapturedLogs`, …) live in
/// TwilioSMSSenderTests.swift.
@Suite("Voice and WhatsApp senders")
struct VoiceWhatsAppSenderTests {
    static let accountSID = TwilioSMSSenderTests.accountSID
    static let authToken = TwilioSMSSenderTests.authToken
    static let metaToken = "EAAG-meta-access-token-do-not-log"
    static let phone = "+14155550100"

    static func call(project: String = "Acme", code: String = "480719", language: String = "en") -> OutgoingMessage {
        let spoken = MessageTemplates.speech(language: language, projectName: project, code: code)
        return OutgoingMessage(
            id: "msg_01CALL", channel: .voice, to: phone, body: spoken.lines.joined(separator: "\n"), code: code,
            language: language, speech: .init(language: spoken.voiceLanguage, lines: spoken.lines))
    }

    static func whatsapp(code: String = "480719", language: String = "en") -> OutgoingMessage {
        OutgoingMessage(
            id: "msg_01WHATSAPP", channel: .whatsapp, to: phone, body: "*\(code)* is your Acme verification code.",
            code: code, language: language)
    }

    static func twilio(_ baseURL: String, from: String? = "+14155550123", service: String? = nil)
        -> TwilioConfiguration
    {
        TwilioConfiguration(
            accountSID: accountSID, authToken: authToken, from: from, messagingServiceSID: service, baseURL: baseURL)
    }

    /// Twilio's 201 with a new Call resource.
    static let callCreated = StandInAnswer(
        status: .created, contentType: TwilioAnswer.json,
        body: """
            {"account_sid":"\(accountSID)","api_version":"2010-04-01","direction":"outbound-api",\
            "from":"+14155550123","sid":"CA0123456789abcdef0123456789abcdef","status":"queued","to":"+14155550100"}
            """)

    /// Meta's 200 for an accepted template message.
    static let metaAccepted = StandInAnswer(
        status: .ok, contentType: "application/json",
        body: """
            {"messaging_product":"whatsapp","contacts":[{"input":"14155550100","wa_id":"14155550100"}],\
            "messages":[{"id":"wamid.HBgLMTQxNTU1NTAxMDAVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA"}]}
            """)

    /// A Graph API error as Meta writes it.
    static func metaError(_ status: Int, code: Int, message: String, subcode: Int? = nil) -> StandInAnswer {
        let sub = subcode.map { #","error_subcode":\#($0)"# } ?? ""
        return StandInAnswer(
            status: .init(code: status), contentType: "application/json",
            body: """
                {"error":{"message":"\(message)","type":"OAuthException","code":\(code)\(sub),\
                "error_data":{"messaging_product":"whatsapp","details":"Recipient +14155550100 is not on WhatsApp"},\
                "fbtrace_id":"AbCdEfGhIjK"}}
                """)
    }

    static func meta(_ baseURL: String) -> MetaWhatsAppConfiguration {
        MetaWhatsAppConfiguration(
            phoneNumberID: "106540352242922", accessToken: metaToken, templateName: "verity_code", baseURL: baseURL)
    }

    static func expectNothingSecret(in logs: CapturedLogs, code: String = "480719") {
        for line in logs.lines {
            #expect(!line.contains(authToken))
            #expect(!line.contains(metaToken))
            #expect(!line.contains("14155550100"))
            #expect(!line.contains(code))
            #expect(!line.contains("4, 8, 0"))
        }
    }

    // MARK: - Twilio voice

    @Test("a call is a form POST to Calls.json whose TwiML says the code twice, with a pause, in the language")
    func twilioCall() async throws {
        let logs = CapturedLogs()
        let recorded = try await withStandIn(answer: Self.callCreated) { baseURL, client in
            let sender = TwilioVoiceSender(
                configuration: Self.twilio(baseURL), provider: ProviderClient(httpClient: client, logger: logs.logger))
            try await sender.send(Self.call(project: "Tom & Jerry's <Cheese>", language: "de"))
        }
        let request = try #require(recorded.only)
        #expect(request.method == "POST")
        #expect(request.path == "/2010-04-01/Accounts/\(Self.accountSID)/Calls.json")
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
        let credentials = "\(Self.accountSID):\(Self.authToken)"
        #expect(request.headers["authorization"] == "Basic \(Data(credentials.utf8).base64EncodedString())")
        let fields = try #require(decodeForm(String(decoding: request.body, as: UTF8.self)))
        #expect(fields.map(\.name) == ["To", "From", "Twiml"])
        #expect(fields[0].value == Self.phone && fields[1].value == "+14155550123")
        let twiml = fields[2].value
        let spoken = "4, 8, 0, 7, 1, 9"
        #expect(
            twiml == #"<?xml version="1.0" encoding="UTF-8"?><Response>"#
                + #"<Say language="de-DE">Hallo. Ihr Tom &amp; Jerry&#39;s &lt;Cheese&gt;-Bestätigungscode lautet: "#
                + #"\#(spoken).</Say><Pause length="1"/>"#
                + #"<Say language="de-DE">Ich wiederhole: Ihr Code lautet \#(spoken). Auf Wiederhören.</Say>"#
                + "</Response>")
        #expect(logs.lines.contains { $0.contains("CA0123456789abcdef0123456789abcdef") }, "the call SID is logged")
        Self.expectNothingSecret(in: logs)
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var status: Int
        var code: Int?
        var kind: DeliveryError.Kind
        var reason: String
        var testDescription: String { "\(status) \(code.map(String.init) ?? "-") → \(kind)" }
    }

    @Test(
        "maps Twilio's Calls errors",
        arguments: [
            ErrorCase(status: 400, code: 21215, kind: .permanent, reason: "twilio 400 21215"),
            ErrorCase(status: 400, code: 13224, kind: .permanent, reason: "twilio 400 13224"),
            ErrorCase(status: 401, code: 20003, kind: .permanent, reason: "twilio 401 20003"),
            ErrorCase(status: 429, code: 20429, kind: .transient, reason: "twilio 429 20429"),
            ErrorCase(status: 503, code: nil, kind: .transient, reason: "twilio 503"),
        ])
    func twilioCallErrors(_ errorCase: ErrorCase) async throws {
        let body =
            errorCase.code.map {
                #"{"code":\#($0),"message":"The number +14155550100 is unverified or not allowed","more_info":"#
                    + #""https://www.twilio.com/docs/errors/\#($0)","status":\#(errorCase.status)}"#
            } ?? "<html>unavailable</html>"
        let logs = CapturedLogs()
        let recorded = try await withStandIn(
            answer: StandInAnswer(status: .init(code: errorCase.status), contentType: TwilioAnswer.json, body: body)
        ) { baseURL, client in
            let sender = TwilioVoiceSender(
                configuration: Self.twilio(baseURL), provider: ProviderClient(httpClient: client, logger: logs.logger))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.call()) }
            #expect(error?.kind == errorCase.kind && error?.reason == errorCase.reason)
        }
        #expect(recorded.count == 1, "a failed call is not retried inside the sender")
        Self.expectNothingSecret(in: logs)
    }

    @Test("without a From number, or for another channel, nothing is called and the failure is permanent")
    func twilioCallRefusals() async throws {
        let recorded = try await withStandIn(answer: Self.callCreated) { baseURL, client in
            let provider = ProviderClient(httpClient: client, logger: Logger(label: "test"))
            let unconfigured = TwilioVoiceSender(configuration: Self.twilio(baseURL, from: nil), provider: provider)
            let missing = await #expect(throws: DeliveryError.self) { try await unconfigured.send(Self.call()) }
            #expect(missing?.kind == .permanent)
            let sender = TwilioVoiceSender(configuration: Self.twilio(baseURL), provider: provider)
            let sms = OutgoingMessage(id: "msg_1", channel: .sms, to: Self.phone, body: "480719")
            let wrong = await #expect(throws: DeliveryError.self) { try await sender.send(sms) }
            #expect(wrong?.kind == .permanent)
        }
        #expect(recorded.isEmpty)
    }

    @Test("a refused connection and a slow answer are transient")
    func twilioCallTransport() async throws {
        let port = try await loopbackPortWithNoListener()
        try await withNonRetryingHTTPClient { client in
            let sender = TwilioVoiceSender(
                configuration: Self.twilio("http://127.0.0.1:\(port)"),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test")))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.call()) }
            #expect(error?.kind == .transient)
        }
        var slow = Self.callCreated
        slow.delay = .seconds(1)
        _ = try await withStandIn(answer: slow) { baseURL, client in
            var configuration = Self.twilio(baseURL)
            configuration.timeout = .milliseconds(300)
            let sender = TwilioVoiceSender(
                configuration: configuration, provider: ProviderClient(httpClient: client, logger: Logger(label: "t")))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.call()) }
            #expect(error?.kind == .transient && error?.reason.hasPrefix("twilio timed out") == true)
        }
    }

    // MARK: - Twilio WhatsApp

    @Test("a WhatsApp message through Twilio uses whatsapp: addresses, the language's Content Template and the code")
    func twilioWhatsApp() async throws {
        let logs = CapturedLogs()
        let recorded = try await withStandIn(answer: TwilioAnswer.created.standIn) { baseURL, client in
            let sender = TwilioWhatsAppSender(
                configuration: TwilioWhatsAppConfiguration(
                    account: Self.twilio(baseURL, from: "whatsapp:+14155550123"),
                    contentSID: "HX00000000000000000000000000000000",
                    contentSIDsByLanguage: ["es": "HX11111111111111111111111111111111"]),
                provider: ProviderClient(httpClient: client, logger: logs.logger))
            try await sender.send(Self.whatsapp())
            try await sender.send(Self.whatsapp(code: "654321", language: "es"))
        }
        #expect(recorded.count == 2)
        for request in recorded {
            #expect(request.path == "/2010-04-01/Accounts/\(Self.accountSID)/Messages.json")
            #expect(request.headers["authorization"]?.hasPrefix("Basic ") == true)
        }
        let first = try #require(decodeForm(String(decoding: recorded[0].body, as: UTF8.self)))
        #expect(first.map(\.name) == ["To", "From", "ContentSid", "ContentVariables"])
        #expect(
            first.map(\.value) == [
                "whatsapp:+14155550100", "whatsapp:+14155550123", "HX00000000000000000000000000000000",
                #"{"1":"480719"}"#,
            ])
        let second = try #require(decodeForm(String(decoding: recorded[1].body, as: UTF8.self)))
        #expect(second.map(\.value)[2...] == ["HX11111111111111111111111111111111", #"{"1":"654321"}"#])
        Self.expectNothingSecret(in: logs)
    }

    @Test("a Messaging Service sends instead of a From number; a refused recipient is permanent")
    func twilioWhatsAppService() async throws {
        let refused = StandInAnswer(
            status: .badRequest, contentType: TwilioAnswer.json,
            body: """
                {"code":63024,"message":"Invalid message recipient",\
                "more_info":"https://www.twilio.com/docs/errors/63024","status":400}
                """)
        let recorded = try await withStandIn(answer: refused) { baseURL, client in
            let sender = TwilioWhatsAppSender(
                configuration: TwilioWhatsAppConfiguration(
                    account: Self.twilio(baseURL, from: nil, service: "MG0123"), contentSID: "HX0"),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "test")))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.whatsapp()) }
            #expect(error?.kind == .permanent && error?.reason == "twilio 400 63024")
        }
        let request = try #require(recorded.only)
        let fields = try #require(decodeForm(String(decoding: request.body, as: UTF8.self)))
        #expect(fields.map(\.name) == ["To", "MessagingServiceSid", "ContentSid", "ContentVariables"])
    }

    // MARK: - Meta WhatsApp Cloud API

    @Test("a WhatsApp message to Meta is a Bearer-authenticated authentication template with the copy-code button")
    func metaTemplate() async throws {
        let logs = CapturedLogs()
        let recorded = try await withStandIn(answer: Self.metaAccepted) { baseURL, client in
            let sender = MetaWhatsAppSender(
                configuration: Self.meta(baseURL + "/"),
                provider: ProviderClient(httpClient: client, logger: logs.logger))
            try await sender.send(Self.whatsapp(language: "pt"))
        }
        let request = try #require(recorded.only)
        #expect(request.method == "POST")
        #expect(request.path == "/v21.0/106540352242922/messages")
        #expect(request.headers["authorization"] == "Bearer \(Self.metaToken)")
        #expect(request.headers["content-type"] == "application/json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? NSDictionary)
        let expected: NSDictionary = [
            "messaging_product": "whatsapp", "recipient_type": "individual", "to": "14155550100", "type": "template",
            "template": [
                "name": "verity_code", "language": ["code": "pt_BR"],
                "components": [
                    ["type": "body", "parameters": [["type": "text", "text": "480719"]]],
                    [
                        "type": "button", "sub_type": "url", "index": "0",
                        "parameters": [["type": "text", "text": "480719"]],
                    ],
                ],
            ],
        ]
        #expect(json == expected)
        #expect(logs.lines.contains { $0.contains("wamid.HBgLMTQxNTU1NTAxMDAVAgARGBI1RjQyNUE3NEYxMzAzMzQ5MkEA") })
        Self.expectNothingSecret(in: logs)
    }

    @Test(
        "maps Meta's errors: no WhatsApp is permanent, throttling is transient",
        arguments: [
            ErrorCase(status: 400, code: 131026, kind: .permanent, reason: "meta 400 131026"),
            ErrorCase(status: 400, code: 132001, kind: .permanent, reason: "meta 400 132001"),
            ErrorCase(status: 401, code: 190, kind: .permanent, reason: "meta 401 190"),
            ErrorCase(status: 400, code: 130429, kind: .transient, reason: "meta 400 130429"),
            ErrorCase(status: 400, code: 131056, kind: .transient, reason: "meta 400 131056"),
            ErrorCase(status: 429, code: 80007, kind: .transient, reason: "meta 429 80007"),
            ErrorCase(status: 500, code: 131000, kind: .transient, reason: "meta 500 131000"),
            ErrorCase(status: 503, code: nil, kind: .transient, reason: "meta 503"),
        ])
    func metaErrors(_ errorCase: ErrorCase) async throws {
        let answer =
            errorCase.code.map { Self.metaError(errorCase.status, code: $0, message: "(#\($0)) Message undeliverable") }
            ?? StandInAnswer(status: .serviceUnavailable, contentType: "text/html", body: "<html>down</html>")
        let logs = CapturedLogs()
        let recorded = try await withStandIn(answer: answer) { baseURL, client in
            let sender = MetaWhatsAppSender(
                configuration: Self.meta(baseURL), provider: ProviderClient(httpClient: client, logger: logs.logger))
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(Self.whatsapp()) }
            #expect(error?.kind == errorCase.kind && error?.reason == errorCase.reason)
        }
        #expect(recorded.count == 1)
        Self.expectNothingSecret(in: logs)
        if errorCase.code != nil { #expect(logs.lines.contains { $0.contains("AbCdEfGhIjK") }, "fbtrace_id is logged") }
    }

    @Test("the Meta configuration's description hides the token; a message without a code is refused unsent")
    func metaRefusals() async throws {
        #expect(!"\(Self.meta("https://graph.facebook.com"))".contains(Self.metaToken))
        let recorded = try await withStandIn(answer: Self.metaAccepted) { baseURL, client in
            let sender = MetaWhatsAppSender(
                configuration: Self.meta(baseURL),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "t")))
            var message = Self.whatsapp()
            message.code = nil
            let error = await #expect(throws: DeliveryError.self) { try await sender.send(message) }
            #expect(error?.kind == .permanent)
        }
        #expect(recorded.isEmpty)
    }

    // MARK: - Voice webhook

    @Test("a call through the voice webhook is signed JSON with the lines, their language and the code")
    func voiceWebhook() async throws {
        let signedAt = Date(timeIntervalSince1970: 1_700_000_000)
        let secret = "whsec_voice-secret-do-not-log"
        let recorded = try await withStandIn(answer: StandInAnswer(status: .accepted)) { baseURL, client in
            let sender = WebhookVoiceSender(
                configuration: WebhookVoiceConfiguration(url: baseURL + "/calls", secret: secret),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "t"), now: { signedAt }))
            try await sender.send(Self.call(language: "ja"))
        }
        let request = try #require(recorded.only)
        #expect(request.path == "/calls" && request.headers["verity-message-id"] == "msg_01CALL")
        let signature = try #require(request.headers["verity-signature"])
        #expect(WebhookSignature.verify(header: signature, secret: secret, body: request.body, now: signedAt))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        #expect(json["channel"] as? String == "voice" && json["to"] as? String == Self.phone)
        #expect(json["language"] as? String == "ja-JP" && json["code"] as? String == "480719")
        let lines = try #require(json["lines"] as? [String])
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains("4、8、0、7、1、9") })
        #expect(json["body"] as? String == lines.joined(separator: "\n"))
    }

    // MARK: - Through the outbox

    @Test("Through the outbox: Meta's 503 is retried, then the message is sent once", arguments: TestEngine.available)
    func metaRetriedThroughOutbox(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let recorded = try await withSequenceStandIn([
            StandInAnswer(status: .serviceUnavailable, contentType: "text/html", body: "busy"), Self.metaAccepted,
        ]) { baseURL, client in
            var senders = node.sender.senders
            senders.whatsapp = MetaWhatsAppSender(
                configuration: Self.meta(baseURL),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "t")))
            senders.whatsappName = "meta"
            let app = try buildApplication(node.configuration, verity: node.verity, senders: senders)
            try await ServerGate.run {
                try await app.test(.router) { client in
                    _ = try await client.startVerification(Self.phone, channel: "whatsapp", key: node.apiKey)
                    try await waitUntil {
                        try await node.verity.outbox.messages().first?.message.lastError == "meta 503"
                    }
                    node.clock.advance(by: 2)
                    try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .sent }
                    let stored = try #require(try await node.verity.outbox.messages().first?.message)
                    #expect(stored.sender == "meta" && stored.attempts == 2)
                }
            }
        }
        #expect(recorded.count == 2)
    }

    @Test(
        "Through the outbox: a number without WhatsApp (131026) falls back to SMS with the same code",
        arguments: TestEngine.available)
    func metaFallsBackToSMS(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(fallbackChannel: .sms))
        let recorded = try await withStandIn(
            answer: Self.metaError(400, code: 131026, message: "(#131026) Message undeliverable")
        ) { baseURL, client in
            var senders = node.sender.senders
            senders.whatsapp = MetaWhatsAppSender(
                configuration: Self.meta(baseURL),
                provider: ProviderClient(httpClient: client, logger: Logger(label: "t")))
            senders.whatsappName = "meta"
            let app = try buildApplication(node.configuration, verity: node.verity, senders: senders)
            try await ServerGate.run {
                try await app.test(.router) { client in
                    let started = try await client.startVerification(Self.phone, channel: "whatsapp", key: node.apiKey)
                    let id = try started.decode(VerificationResponse.self).id
                    let sms = try #require(try await node.sender.waitForMessages(to: Self.phone).first)
                    #expect(sms.channel == .sms)
                    let code = try #require(RecordingSender.code(in: sms))
                    let checked = try await client.check(id: id, code: code, key: node.apiKey)
                    #expect(try checked.decode(CheckVerificationResponse.self).valid)
                    let dead = try await node.verity.outbox.messages().map(\.message).filter { $0.channel == .whatsapp }
                    #expect(dead.map(\.status) == [.dead] && dead.map(\.lastError) == ["meta 400 131026"])
                }
            }
        }
        let request = try #require(recorded.only)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
        let template = try #require(json["template"] as? [String: Any])
        let components = try #require(template["components"] as? [[String: Any]])
        let parameters = try #require(components.first?["parameters"] as? [[String: String]])
        // The code WhatsApp was asked to deliver is the one that then went by SMS.
        #expect(parameters.first?["text"]?.count == 6)
    }
}

/// `VERITY_VOICE_SENDER`, `VERITY_WHATSAPP_SENDER` and their providers' settings.
@Suite("Voice and WhatsApp configuration")
struct VoiceWhatsAppConfigurationTests {
    static let twilioAccount = ["VERITY_TWILIO_ACCOUNT_SID": "AC123", "VERITY_TWILIO_AUTH_TOKEN": "secret"]

    @Test("Twilio calls and Meta WhatsApp, with their numbers, template and endpoints")
    func twilioVoiceMetaWhatsApp() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(
            environment: Self.twilioAccount.merging([
                "VERITY_VOICE_SENDER": "twilio", "VERITY_TWILIO_VOICE_FROM": "+15005550006",
                "VERITY_TWILIO_BASE_URL": "http://127.0.0.1:9",
                "VERITY_WHATSAPP_SENDER": "meta", "VERITY_WHATSAPP_PHONE_NUMBER_ID": "1065",
                "VERITY_WHATSAPP_ACCESS_TOKEN": "EAAG", "VERITY_WHATSAPP_TEMPLATE": "verity_code",
                "VERITY_WHATSAPP_API_VERSION": "v22.0", "VERITY_WHATSAPP_BASE_URL": "http://127.0.0.1:10",
                "VERITY_WHATSAPP_TEMPLATE_LANGUAGES": "en:en, es: es_MX",
            ]) { $1 })
        guard case .twilio(let twilio) = configuration.voice, case .meta(let meta) = configuration.whatsapp else {
            Issue.record("expected Twilio calls and Meta WhatsApp")
            return
        }
        #expect(twilio.from == "+15005550006" && twilio.baseURL == "http://127.0.0.1:9")
        #expect(meta.phoneNumberID == "1065" && meta.templateName == "verity_code" && meta.apiVersion == "v22.0")
        #expect(meta.baseURL == "http://127.0.0.1:10")
        #expect(meta.templateLanguages["en"] == "en" && meta.templateLanguages["es"] == "es_MX")
        #expect(meta.templateLanguages["pt"] == "pt_BR")
        // SMS stays on the console: each channel has its own sender.
        guard case .console = configuration.sms else {
            Issue.record("expected console SMS")
            return
        }
    }

    @Test("A voice webhook and Twilio WhatsApp with a Content Template per language")
    func webhookVoiceTwilioWhatsApp() throws {
        var configuration = ServerConfiguration()
        try configuration.apply(
            environment: Self.twilioAccount.merging([
                "VERITY_VOICE_SENDER": "webhook", "VERITY_VOICE_WEBHOOK_URL": "https://voice.example/calls",
                "VERITY_VOICE_WEBHOOK_SECRET": "whsec_x",
                "VERITY_WHATSAPP_SENDER": "twilio", "VERITY_TWILIO_WHATSAPP_FROM": "+15005550007",
                "VERITY_TWILIO_WHATSAPP_CONTENT_SID": "HX0", "VERITY_TWILIO_WHATSAPP_CONTENT_SIDS": "es:HX1,pt:HX2",
            ]) { $1 })
        guard case .webhook(let webhook) = configuration.voice, case .twilio(let twilio) = configuration.whatsapp
        else {
            Issue.record("expected a voice webhook and Twilio WhatsApp")
            return
        }
        #expect(webhook.url == "https://voice.example/calls")
        #expect(twilio.account.from == "+15005550007" && twilio.contentSID == "HX0")
        #expect(twilio.contentSIDsByLanguage == ["es": "HX1", "pt": "HX2"])
    }

    @Test(
        "Incomplete voice and WhatsApp settings are refused",
        arguments: [
            ["VERITY_VOICE_SENDER": "carrier-pigeon"],
            ["VERITY_VOICE_SENDER": "twilio"],
            ["VERITY_VOICE_SENDER": "webhook", "VERITY_VOICE_WEBHOOK_URL": "https://voice.example"],
            ["VERITY_WHATSAPP_SENDER": "telegram"],
            ["VERITY_WHATSAPP_SENDER": "meta", "VERITY_WHATSAPP_PHONE_NUMBER_ID": "1065"],
            [
                "VERITY_WHATSAPP_SENDER": "meta", "VERITY_WHATSAPP_PHONE_NUMBER_ID": "1065",
                "VERITY_WHATSAPP_ACCESS_TOKEN": "EAAG", "VERITY_WHATSAPP_TEMPLATE": "verity_code",
                "VERITY_WHATSAPP_TEMPLATE_LANGUAGES": "english",
            ],
            ["VERITY_WHATSAPP_SENDER": "twilio", "VERITY_TWILIO_WHATSAPP_CONTENT_SID": "HX0"],
        ])
    func refused(_ environment: [String: String]) {
        var configuration = ServerConfiguration()
        #expect(throws: ConfigurationError.self) {
            try configuration.apply(environment: Self.twilioAccount.merging(environment) { $1 })
        }
    }
}
