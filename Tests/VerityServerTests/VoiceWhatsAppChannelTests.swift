import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Codes by phone call and by WhatsApp through the native API and sign-in: what is delivered, the one pending code
/// shared by the phone channels, the fallback channel, the toll-fraud rules and a channel turned off.
@Suite("Voice and WhatsApp channels")
struct VoiceWhatsAppChannelTests {
    let phone = "+14155550100"

    /// The session's `amr`, as `/v1/auth/me` reads it.
    static func amr(of session: String, client: some TestClientProtocol, node: TestNode) async throws -> [String] {
        try await client.auth(.get, "me", project: node.project, session: session).decode(MeResponse.self).amr
    }

    @Test(
        "A call says the code digit by digit, twice, in the message's language; the code it says approves",
        arguments: TestEngine.available)
    func voiceCode(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            let started = try await client.startVerification(phone, channel: "voice", key: node.apiKey, locale: "fr-CA")
            #expect(started.status == .created)
            let verification = try started.decode(VerificationResponse.self)
            #expect(verification.channel == .voice && verification.to == phone)

            let call = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(call.channel == .voice)
            let speech = try #require(call.speech)
            #expect(speech.language == "fr-FR")
            #expect(speech.lines.count == 2)
            let code = try #require(call.code)
            let spoken = code.map(String.init).joined(separator: ", ")
            #expect(speech.lines[0] == "Bonjour. Votre code de vérification Acme est : \(spoken).")
            #expect(speech.lines[1] == "Je répète : votre code est \(spoken). Au revoir.")
            #expect(call.body == speech.lines.joined(separator: "\n"))
            #expect(RecordingSender.code(in: call) == code)

            let checked = try await client.check(id: verification.id, code: code, key: node.apiKey)
            #expect(try checked.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test("A WhatsApp message carries the code and its text; the code approves", arguments: TestEngine.available)
    func whatsappCode(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let started = try await client.startVerification(phone, channel: "whatsapp", key: node.apiKey)
            #expect(try started.decode(VerificationResponse.self).channel == .whatsapp)
            let message = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(message.channel == .whatsapp && message.language == "en" && message.speech == nil)
            let code = try #require(message.code)
            #expect(
                message.body == "*\(code)* is your Acme verification code. For your security, do not share this code.")
            let checked = try await client.check(to: phone, code: code, key: node.apiKey)
            #expect(try checked.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test("Switching channels keeps the pending code and counts each switch as a send", arguments: TestEngine.available)
    func sameCodeAcrossChannels(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            var ids: Set<String> = []
            for channel in ["whatsapp", "sms", "voice"] {
                let started = try await client.startVerification(phone, channel: channel, key: node.apiKey)
                ids.insert(try started.decode(VerificationResponse.self).id)
            }
            #expect(ids.count == 1)
            let messages = try await node.sender.waitForMessages(to: phone, count: 3)
            // The worker delivers a batch side by side: the order they arrive in is not the order they were asked.
            #expect(messages.count == 3 && Set(messages.map(\.channel)) == [.whatsapp, .sms, .voice])
            let codes = Set(messages.compactMap(RecordingSender.code(in:)))
            #expect(codes.count == 1)

            let fetched = try await client.send(.get, "/v1/verifications/\(try #require(ids.first))", key: node.apiKey)
            let verification = try fetched.decode(VerificationResponse.self)
            #expect(verification.sendAttempts == 3 && verification.channel == .voice)

            // The switches share the send cap: two more sends, then the sixth is refused.
            for channel in ["sms", "whatsapp"] {
                #expect(
                    try await client.startVerification(phone, channel: channel, key: node.apiKey).status == .created)
            }
            let sixth = try await client.startVerification(phone, channel: "voice", key: node.apiKey)
            #expect(try sixth.problem().code == "max_send_attempts_reached")
        }
    }

    @Test(
        "A permanent failure sends the same code once more by the project's fallback channel",
        arguments: TestEngine.available)
    func fallback(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(fallbackChannel: .sms))
        // WhatsApp refuses (the number has none), then the fallback SMS is refused too: no third try.
        node.sender.failNext(
            DeliveryError(.permanent, "meta 400 131026"), DeliveryError(.permanent, "twilio 400 21610"))
        try await node.run { client in
            let started = try await client.startVerification(phone, channel: "whatsapp", key: node.apiKey)
            let id = try started.decode(VerificationResponse.self).id
            try await waitUntil {
                try await node.verity.outbox.messages().filter { $0.message.status == .dead }.count == 2
            }
            let stored = try await node.verity.outbox.messages().map(\.message)
            let byChannel = Dictionary(stored.map { ($0.channel, $0) }) { first, _ in first }
            #expect(stored.count == 2 && byChannel.count == 2)
            #expect(byChannel[.whatsapp]?.lastError == "meta 400 131026")
            #expect(byChannel[.sms]?.lastError == "twilio 400 21610")
            #expect(stored.allSatisfy { $0.verificationId == id })
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await node.verity.outbox.messages().count == 2)
            let verification = try await client.send(.get, "/v1/verifications/\(id)", key: node.apiKey)
                .decode(VerificationResponse.self)
            #expect(verification.channel == .sms && verification.sendAttempts == 2)
        }
    }

    @Test("The fallback message carries the same code, and is delivered", arguments: TestEngine.available)
    func fallbackDelivers(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine, settings: ProjectSettings(disabledChannels: [], fallbackChannel: .voice))
        node.sender.failNext(DeliveryError(.permanent, "twilio 400 21408"))
        try await node.run { client in
            let started = try await client.startVerification(phone, channel: "sms", key: node.apiKey)
            let id = try started.decode(VerificationResponse.self).id
            let call = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(call.channel == .voice)
            let code = try #require(RecordingSender.code(in: call))
            let checked = try await client.check(id: id, code: code, key: node.apiKey)
            #expect(try checked.decode(CheckVerificationResponse.self).valid)
        }
    }

    @Test(
        "Without a fallback channel, or when the failed message went by it, a permanent failure sends nothing more",
        arguments: TestEngine.available, [nil, Channel.sms])
    func noFallback(engine: TestEngine, fallback: Channel?) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(fallbackChannel: fallback))
        node.sender.failNext(DeliveryError(.permanent, "twilio 400 21610"))
        try await node.run { client in
            _ = try await client.startVerification(phone, channel: "sms", key: node.apiKey)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .dead }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await node.verity.outbox.messages().count == 1)
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("An instant link whose SMS failed for good is not read out in a call", arguments: TestEngine.available)
    func noFallbackForLinks(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine, settings: ProjectSettings(disabledChannels: [], fallbackChannel: .voice))
        node.sender.failNext(DeliveryError(.permanent, "twilio 400 21610"))
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"\#(phone)","flow":"desktop"}"#, node: node, client: client)
            #expect(try await flow.step("link/start", client: client).status == .ok)
            try await waitUntil { try await node.verity.outbox.messages().first?.message.status == .dead }
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await node.verity.outbox.messages().count == 1)
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("Calls and WhatsApp are held to SMS's destination rules", arguments: TestEngine.available)
    func destinationRules(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine, settings: ProjectSettings(allowedCountries: ["US"], disabledChannels: []))
        try await node.run { client in
            for channel in ["voice", "whatsapp"] {
                let premium = try await client.startVerification("+19005550100", channel: channel, key: node.apiKey)
                #expect(premium.status == .forbidden)
                #expect(try premium.problem().code == "premium_rate_number")
                let abroad = try await client.startVerification("+447700900123", channel: channel, key: node.apiKey)
                #expect(try abroad.problem().code == "country_not_allowed")
                let email = try await client.startVerification("ann@example.com", channel: channel, key: node.apiKey)
                #expect(try email.problem().code == "invalid_phone_number")
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("The number-block limit counts SMS, calls and WhatsApp together", arguments: TestEngine.available)
    func numberBlockAcrossChannels(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn) {
            $0.rateLimits.perNumberBlock = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await node.run { client in
            let sms = try await client.startVerification("+14155550101", channel: "sms", key: node.apiKey)
            let call = try await client.startVerification("+14155550102", channel: "voice", key: node.apiKey)
            #expect(sms.status == .created && call.status == .created)
            let whatsapp = try await client.startVerification("+14155550103", channel: "whatsapp", key: node.apiKey)
            #expect(whatsapp.status == .tooManyRequests)
            #expect(try whatsapp.problem().code == "rate_limited")
        }
    }

    @Test(
        "A channel the project turned off is 403 channel_disabled everywhere; the others still send",
        arguments: TestEngine.available)
    func channelTurnedOff(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(disabledChannels: [.voice, .email]))
        try await node.run { client in
            let call = try await client.startVerification(phone, channel: "voice", key: node.apiKey)
            #expect(call.status == .forbidden)
            #expect(try call.problem().code == "channel_disabled")
            let email = try await client.startVerification("ann@example.com", channel: "email", key: node.apiKey)
            #expect(try email.problem().code == "channel_disabled")
            let signIn = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"\#(phone)","channel":"voice"}"#)
            #expect(try signIn.problem().code == "channel_disabled")
            let emailSignIn = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"ann@example.com"}"#)
            #expect(try emailSignIn.problem().code == "channel_disabled")
            try await Task.sleep(for: .milliseconds(100))
            #expect(node.sender.messages().isEmpty)

            #expect(try await client.startVerification(phone, channel: "whatsapp", key: node.apiKey).status == .created)
            #expect(try await node.sender.waitForMessages(to: phone).map(\.channel) == [.whatsapp])
        }
    }

    @Test(
        "The Firebase face answers OPERATION_NOT_ALLOWED when the project turned SMS off",
        arguments: TestEngine.available)
    func firebaseWithoutSMS(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(disabledChannels: [.sms]))
        let link = try await FirebaseFaceTests.named(node)
        try await node.run { client in
            let send = try await client.firebase(
                "\(FirebaseFaceTests.v1)/accounts:sendVerificationCode", key: link.apiKey,
                json: #"{"phoneNumber":"\#(phone)"}"#)
            #expect(send.status == .badRequest)
            let error = try #require(try send.json()["error"] as? [String: Any])
            #expect(error["message"] as? String == "OPERATION_NOT_ALLOWED")
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test(
        "Sign-in by call or WhatsApp proves the phone: amr names the channel, and step-up goes to the email",
        arguments: TestEngine.available)
    func signInByPhoneChannels(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            let started = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"\#(phone)","channel":"whatsapp"}"#)
            #expect(try started.decode(OTPStartResponse.self).channel == .whatsapp)
            // Then a call instead: the same code, by call.
            let called = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"\#(phone)","channel":"voice"}"#)
            #expect(try called.decode(OTPStartResponse.self).channel == .voice)
            let messages = try await node.sender.waitForMessages(to: phone, count: 2)
            #expect(messages.count == 2 && Set(messages.map(\.channel)) == [.whatsapp, .voice])
            let call = try #require(messages.first { $0.channel == .voice })
            let code = try #require(RecordingSender.code(in: call))
            #expect(messages.allSatisfy { RecordingSender.code(in: $0) == code })
            let verified = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(phone)","code":"\#(code)"}"#)
            let signedIn = try verified.decode(AuthResponse.self)
            #expect(try await Self.amr(of: signedIn.sessionJwt, client: client, node: node) == ["otp", "voice"])

            _ = try await client.send(
                .patch, "/v1/users/\(signedIn.user.id)", key: node.apiKey,
                json: #"{"loginIds":["\#(phone)","eve@example.com"]}"#)
            let stepUp = try await client.auth(
                .post, "stepup/start", project: node.project, session: signedIn.sessionJwt)
            let step = try stepUp.decode(StepUpStartResponse.self)
            #expect(step.method == .otp && step.channel == .email)

            let mismatched = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"ann@example.com","channel":"voice"}"#)
            #expect(try mismatched.problem().code == "invalid_request")
        }
    }

    @Test(
        "A possession code goes by call or WhatsApp when asked; a resend by another channel is the same code",
        arguments: TestEngine.available)
    func possessionChannels(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"\#(phone)","flow":"mobile"}"#, node: node, client: client)
            let started = try await flow.step("otp/start", json: #"{"channel":"voice"}"#, client: client)
            #expect(try started.decode(PossessionState.self).status == .otpSent)
            let call = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(call.channel == .voice)
            let code = try #require(RecordingSender.code(in: call))
            #expect(try await flow.step("otp/resend", json: #"{"channel":"whatsapp"}"#, client: client).status == .ok)
            let messages = try await node.sender.waitForMessages(to: phone, count: 2)
            #expect(Set(messages.map(\.channel)) == [.voice, .whatsapp])
            #expect(messages.allSatisfy { RecordingSender.code(in: $0) == code })
            let email = try await flow.step("otp/resend", json: #"{"channel":"email"}"#, client: client)
            #expect(try email.problem().code == "invalid_request")
            let done = try await flow.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)

            // A desktop flow's instant link is a text message: by SMS only.
            let desktop = try await TestFlow.start(
                #"{"phoneNumber":"+14155550109","flow":"desktop"}"#, node: node, client: client)
            let link = try await desktop.step("link/start", json: #"{"channel":"voice"}"#, client: client)
            #expect(try link.problem().code == "invalid_request")
        }
    }

    @Test(
        "With SMS turned off a possession check still proves the number by call, and refuses the SMS default",
        arguments: TestEngine.available)
    func possessionWithoutSMS(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: ProjectSettings(disabledChannels: [.sms]))
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"\#(phone)","flow":"mobile"}"#, node: node, client: client)
            let bySMS = try await flow.step("otp/start", client: client)
            #expect(try bySMS.problem().code == "channel_disabled")
            #expect(try await flow.state(client: client).status == .created)
            let byCall = try await flow.step("otp/start", json: #"{"channel":"voice"}"#, client: client)
            #expect(try byCall.decode(PossessionState.self).status == .otpSent)
            let call = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(call.channel == .voice)
        }
    }

    @Test(
        "Twilio face: Channel=call is a voice verification answered as call, whatsapp is whatsapp, one code for both",
        arguments: TestEngine.available)
    func twilioFace(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        let auth = try node.twilioAuth()
        try await node.run { client in
            let service = try await client.twilioService(auth: auth)
            let path = "/Services/\(service)/Verifications"
            let called = try await client.twilio(.post, path, auth: auth, form: ["To": phone, "Channel": "call"])
            #expect(called.status == .created)
            let call = try called.json()
            #expect(call["channel"] as? String == "call" && call["status"] as? String == "pending")
            // Sends are listed by when they were queued: a moment later, as a person asks again.
            node.clock.advance(by: 1)
            let messaged = try await client.twilio(
                .post, path, auth: auth, form: ["To": phone, "Channel": "whatsapp"])
            let whatsapp = try messaged.json()
            #expect(whatsapp["sid"] as? String == call["sid"] as? String)
            #expect(whatsapp["channel"] as? String == "whatsapp")
            let attempts = try #require(whatsapp["send_code_attempts"] as? [[String: Any]])
            #expect(attempts.compactMap { $0["channel"] as? String } == ["CALL", "WHATSAPP"])

            let messages = try await node.sender.waitForMessages(to: phone, count: 2)
            #expect(Set(messages.map(\.channel)) == [.voice, .whatsapp])
            let code = try #require(messages.compactMap(RecordingSender.code(in:)).first)
            #expect(messages.allSatisfy { RecordingSender.code(in: $0) == code })
            let checked = try await client.twilio(
                .post, "/Services/\(service)/VerificationCheck", auth: auth, form: ["To": phone, "Code": code])
            let check = try checked.json()
            #expect(check["status"] as? String == "approved" && check["channel"] as? String == "whatsapp")

            let premium = try await client.twilio(
                .post, path, auth: auth, form: ["To": "+19005550100", "Channel": "call"])
            try premium.expectTwilioError(403, code: 60605)
            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
                $0.disabledChannels = [.whatsapp]
            }
            let off = try await client.twilio(
                .post, path, auth: auth, form: ["To": "+14155550101", "Channel": "whatsapp"])
            try off.expectTwilioError(400, code: 60223)
        }
    }

    @Test("A step-up code to the phone goes by the channel asked for", arguments: TestEngine.available)
    func stepUpByCall(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            let signedIn = try await client.signIn("eve@example.com", node: node)
            _ = try await client.send(
                .patch, "/v1/users/\(signedIn.user.id)", key: node.apiKey,
                json: #"{"loginIds":["eve@example.com","\#(phone)"]}"#)
            let started = try await client.auth(
                .post, "stepup/start", project: node.project, json: #"{"method":"otp","channel":"voice"}"#,
                session: signedIn.sessionJwt)
            let step = try started.decode(StepUpStartResponse.self)
            #expect(step.method == .otp && step.channel == .voice)
            let call = try #require(try await node.sender.waitForMessages(to: phone).first)
            #expect(call.channel == .voice)
            let code = try #require(RecordingSender.code(in: call))
            let verified = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(code)"}"#,
                session: signedIn.sessionJwt)
            let stepped = try verified.decode(AuthResponse.self)
            #expect(
                try await Self.amr(of: stepped.sessionJwt, client: client, node: node) == ["otp", "email", "voice"])
        }
    }
}

/// The spoken and WhatsApp texts exist in every language the SMS texts do.
@Suite("Voice and WhatsApp templates")
struct VoiceWhatsAppTemplateTests {
    @Test(
        "Every language speaks the code digit by digit, twice, and writes it in a WhatsApp text",
        arguments: ["en", "es", "fr", "de", "pt", "ja"])
    func everyLanguage(language: String) throws {
        let speech = MessageTemplates.speech(language: language, projectName: "Acme", code: "4071")
        #expect(speech.lines.count == 2)
        let separator = language == "ja" ? "、" : ", "
        for line in speech.lines {
            #expect(line.contains(["4", "0", "7", "1"].joined(separator: separator)), "\(language): \(line)")
            #expect(!line.contains("4071"))
        }
        #expect(speech.lines[0].contains("Acme"))
        #expect(speech.lines[0] != speech.lines[1])
        #expect(speech.voiceLanguage.hasPrefix(language + "-"))
        let whatsapp = MessageTemplates.render(
            channel: .whatsapp, language: language, projectName: "Acme", code: "4071")
        #expect(whatsapp.subject == nil && whatsapp.body.contains("*4071*") && whatsapp.body.contains("Acme"))
        let sms = MessageTemplates.render(channel: .sms, language: language, projectName: "Acme", code: "4071").body
        #expect(whatsapp.body != sms)
    }

    @Test("A project name holding {code} stays literal in a call")
    func literalProjectName() {
        let speech = MessageTemplates.speech(language: "en", projectName: "{code} Co", code: "12")
        #expect(speech.lines[0] == "Hello. Your {code} Co verification code is: 1, 2.")
    }

    @Test("The fallback goes by another, enabled phone channel only")
    func fallbackChannel() {
        func fallback(
            after failed: Channel, of purpose: VerificationPurpose = .api, to channel: Channel?,
            disabled: [Channel] = []
        ) -> Channel? {
            VerificationService.fallbackChannel(after: failed, of: purpose, fallback: channel, disabled: disabled)
        }
        #expect(fallback(after: .whatsapp, to: .sms) == .sms)
        #expect(fallback(after: .sms, of: .signIn, to: .voice) == .voice)
        #expect(fallback(after: .sms, to: .sms) == nil)
        #expect(fallback(after: .email, to: .sms) == nil)
        #expect(fallback(after: .sms, to: .voice, disabled: [.voice]) == nil)
        #expect(fallback(after: .sms, to: nil) == nil)
        // An instant link is a text to tap: a call cannot carry it.
        #expect(fallback(after: .sms, of: .possessionLink("pos_1"), to: .voice) == nil)
        #expect(fallback(after: .sms, of: .possessionCode("pos_1"), to: .voice) == .voice)
    }

    @Test("Project settings refuse a fallback that is email or turned off, and keep channels in order")
    func settingsValidation() throws {
        #expect(throws: ConfigurationError.self) { try ProjectSettings(fallbackChannel: .email).validated() }
        #expect(throws: ConfigurationError.self) {
            try ProjectSettings(disabledChannels: [.sms], fallbackChannel: .sms).validated()
        }
        let settings = try ProjectSettings(disabledChannels: [.whatsapp, .voice, .whatsapp]).validated()
        #expect(settings.disabledChannels == [.voice, .whatsapp])
    }
}
