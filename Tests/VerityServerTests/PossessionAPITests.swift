import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// A possession flow as a test drives it: the backend's start, then the app's steps with the auth token.
struct TestFlow: Sendable {
    let started: StartedPossession
    let node: TestNode

    static func start(
        _ json: String, node: TestNode, client: some TestClientProtocol
    ) async throws -> TestFlow {
        let response = try await client.send(.post, "/v1/possession", key: node.apiKey, json: json)
        #expect(response.status == .created)
        return TestFlow(started: try response.decode(StartedPossession.self), node: node)
    }

    func step(_ path: String, json: String? = nil, client: some TestClientProtocol) async throws -> TestResponse {
        try await client.send(
            .post, "/v1/possession/\(started.correlationId)/\(path)", key: started.authToken, json: json)
    }

    func state(client: some TestClientProtocol, wait: Int? = nil) async throws -> PossessionState {
        let query = wait.map { "?wait=\($0)" } ?? ""
        return try await client.send(
            .get, "/v1/possession/\(started.correlationId)\(query)", key: started.authToken
        ).decode(PossessionState.self)
    }

    func validate(client: some TestClientProtocol) async throws -> PossessionValidation {
        let response = try await client.send(
            .post, "/v1/possession/\(started.correlationId)/validate", key: node.apiKey)
        #expect(response.status == .ok)
        return try response.decode(PossessionValidation.self)
    }
}

@Suite("Possession checks")
struct PossessionAPITests {
    @Test("Mobile: code, wrong code, retry, right code; validate once", arguments: TestEngine.available)
    func mobileHappyPath(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550100","flow":"mobile"}"#, node: node, client: client)
            #expect(flow.started.authToken.hasPrefix("vpt_\(flow.started.correlationId)."))
            #expect(StartedPossession.correlationId(inAuthToken: flow.started.authToken) == flow.started.correlationId)
            #expect(flow.started.expiresAt == node.clock.now().addingTimeInterval(900))
            #expect(try await flow.validate(client: client).reason == "pending")

            let started = try await flow.step("otp/start", client: client)
            #expect(started.status == .ok)
            let state = try started.decode(PossessionState.self)
            #expect(state.status == .otpSent && state.codeExpiresAt == node.clock.now().addingTimeInterval(120))
            let code = try await node.sender.code(to: "+14155550100")

            let wrong = try await flow.step("otp/finish", json: #"{"code":"\#(wrongCode(for: code))"}"#, client: client)
            #expect(wrong.status == .unauthorized)
            #expect(try wrong.problem().code == "wrong_code")
            #expect(try wrong.problem().remainingAttempts == 3)
            // Out of order: another entry needs otp/retry first.
            let early = try await flow.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try early.problem().code == "step_out_of_order")
            #expect(try await flow.step("otp/retry", client: client).status == .ok)
            let done = try await flow.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)

            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.method == .otp && validation.phoneNumber == "+14155550100")
            #expect(validation.completedAt != nil)
            let twice = try await flow.validate(client: client)
            #expect(!twice.success && twice.reason == "already_validated")
            #expect(try await flow.step("otp/resend", client: client).problem().code == "step_out_of_order")
            let metrics = String(buffer: try await client.send(.get, "/metrics", key: nil).body)
            for event in ["started", "succeeded", "validated"] {
                #expect(metrics.contains(#"verity_possession_events_total{event="\#(event)"} 1"#))
            }
        }
    }

    @Test("Limits: 3 resends, 3 retries, 3 number changes, each with its own code", arguments: TestEngine.available)
    func limits(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.start(#"{"flow":"mobile"}"#, node: node, client: client)
            let needed = try await flow.step("otp/start", client: client)
            #expect(try needed.problem().code == "phone_number_required")
            #expect(try await flow.state(client: client).phoneNumberNeeded)
            _ = try await flow.step("otp/start", json: #"{"phoneNumber":"+14155550101"}"#, client: client)
            for _ in 1...3 {
                #expect(try await flow.step("otp/resend", client: client).status == .ok)
            }
            #expect(try await flow.step("otp/resend", client: client).problem().code == "resend_limit_reached")
            _ = try await node.sender.waitForMessages(to: "+14155550101", count: 4)

            for (index, number) in ["+14155550102", "+14155550103", "+14155550104"].enumerated() {
                let changed = try await flow.step(
                    "otp/change-number", json: #"{"phoneNumber":"\#(number)"}"#, client: client)
                #expect(try changed.decode(PossessionState.self).numberChangesLeft == 2 - index)
            }
            let fourth = try await flow.step(
                "otp/change-number", json: #"{"phoneNumber":"+14155550105"}"#, client: client)
            #expect(try fourth.problem().code == "number_change_limit_reached")

            let code = try await node.sender.code(to: "+14155550104")
            for _ in 1...3 {
                _ = try await flow.step("otp/finish", json: #"{"code":"\#(wrongCode(for: code))"}"#, client: client)
                #expect(try await flow.step("otp/retry", client: client).status == .ok)
            }
            let last = try await flow.step(
                "otp/finish", json: #"{"code":"\#(wrongCode(for: code))"}"#, client: client)
            #expect(try last.problem().code == "retry_limit_reached")
            #expect(try await flow.state(client: client).status == .failed)
            let validation = try await flow.validate(client: client)
            #expect(!validation.success && validation.reason == "failed")
        }
    }

    @Test("An expired flow refuses its steps and validates false", arguments: TestEngine.available)
    func expired(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550106","flow":"mobile"}"#, node: node, client: client)
            node.clock.advance(by: 901)
            let late = try await flow.step("otp/start", client: client)
            #expect(late.status == .gone)
            #expect(try late.problem().code == "possession_expired")
            #expect(try await flow.validate(client: client).reason == "expired")
        }
    }

    @Test("The auth token runs only its own flow; bad input is a 4xx", arguments: TestEngine.available)
    func tokens(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let one = try await TestFlow.start(
                #"{"phoneNumber":"+14155550107","flow":"mobile"}"#, node: node, client: client)
            let two = try await TestFlow.start(
                #"{"phoneNumber":"+14155550108","flow":"mobile"}"#, node: node, client: client)
            let crossed = try await client.send(
                .post, "/v1/possession/\(one.started.correlationId)/otp/start", key: two.started.authToken)
            #expect(crossed.status == .unauthorized)
            let withKey = try await client.send(
                .post, "/v1/possession/\(one.started.correlationId)/otp/start", key: node.apiKey)
            #expect(withKey.status == .unauthorized)
            let link = try await one.step("link/start", client: client)
            #expect(try link.problem().code == "step_out_of_order")
            for body in [
                #"{"flow":"tablet"}"#, #"{"flow":"mobile","phoneNumber":"12"}"#,
                #"{"flow":"desktop","finalTargetUrl":"javascript:alert(1)"}"#,
            ] {
                let bad = try await client.send(.post, "/v1/possession", key: node.apiKey, json: body)
                #expect(bad.status == .badRequest, "\(body)")
            }
            let unknown = try await client.send(.post, "/v1/possession/pos_nope/validate", key: node.apiKey)
            #expect(try unknown.problem().code == "possession_not_found")
            let other = try await node.otherProject()
            let foreign = try await client.send(
                .post, "/v1/possession/\(one.started.correlationId)/validate", key: other.apiKey)
            #expect(foreign.status == .notFound)
        }
    }

    @Test(
        "Desktop: the instant link's page asks, a POST confirms, the waiting desktop sees it",
        arguments: TestEngine.available)
    func instantLink(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550109","flow":"desktop","finalTargetUrl":"https://shop.example/done","locale":"de"}"#,
                node: node, client: client)
            #expect(try await flow.step("otp/start", client: client).problem().code == "step_out_of_order")
            #expect(try await flow.step("link/start", client: client).status == .ok)
            let message = try #require(try await node.sender.waitForMessages(to: "+14155550109").last)
            #expect(message.body.contains("Tippen Sie"))
            let url = try #require(message.body.split(separator: " ").last.map(String.init))
            #expect(url.hasPrefix("http://127.0.0.1:8080/p/ver_"))
            let path = try #require(URL(string: url)?.path)

            // A GET (a browser, or a link scanner) only shows the question.
            let page = try await client.send(.get, path, key: nil)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains(#"<html lang="de">"#) && html.contains("Ja, das ist mein Telefon"))
            #expect(html.contains(#"<form method="post" action="\#(path)">"#))
            #expect(try await flow.state(client: client).status == .linkSent)

            let confirmed = try await client.send(.post, path, key: nil)
            #expect(confirmed.status == .ok)
            #expect(String(buffer: confirmed.body).contains("https://shop.example/done"))
            #expect(try await flow.state(client: client, wait: 5).status == .succeeded)
            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.method == .instantLink)

            // The link works once; a forged one never.
            #expect(try await client.send(.post, path, key: nil).status == .notFound)
            let forged = String(path.dropLast(3)) + "abc"
            #expect(try await client.send(.get, forged, key: nil).status == .notFound)
        }
    }

    @Test("A test number runs the mobile flow with its fixed code and no message", arguments: TestEngine.available)
    func testNumber(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"123456"}"#)
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+16505551234","flow":"mobile"}"#, node: node, client: client)
            #expect(try await flow.step("otp/start", client: client).status == .ok)
            let done = try await flow.step("otp/finish", json: #"{"code":"123456"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+16505551234").isEmpty)
            #expect(try await flow.validate(client: client).success)
        }
    }

    @Test("Concurrent resends never pass the limit", arguments: TestEngine.available)
    func concurrentResends(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550110","flow":"mobile"}"#, node: node, client: client)
            _ = try await flow.step("otp/start", client: client)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 {
                    group.addTask { Int(try await flow.step("otp/resend", client: client).status.code) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 3)
            #expect(statuses.filter { $0 == 429 }.count == 9)
        }
    }

    /// A carrier check that confirms one number.
    struct FakeCarrier: SilentPossessionProvider {
        let confirmed: String

        func confirms(phoneNumber: String, clientAddress: String?) async throws -> Bool {
            phoneNumber == confirmed
        }
    }

    @Test(
        "A silent provider proves possession without a code; without one the step is refused",
        arguments: TestEngine.available)
    func silent(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { _ in
        } dependencies: {
            $0.silentPossession = FakeCarrier(confirmed: "+14155550111")
        }
        try await node.run { client in
            let yes = try await TestFlow.start(
                #"{"phoneNumber":"+14155550111","flow":"mobile"}"#, node: node, client: client)
            let proven = try await yes.step("silent", client: client).decode(PossessionState.self)
            #expect(proven.status == .succeeded)
            #expect(try await yes.validate(client: client).method == .silent)

            let no = try await TestFlow.start(
                #"{"phoneNumber":"+14155550112","flow":"mobile"}"#, node: node, client: client)
            #expect(try await no.step("silent", client: client).decode(PossessionState.self).status == .created)
            #expect(try await no.step("otp/start", client: client).status == .ok)
        }
        let plain = try await TestNode.make(engine)
        try await plain.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550111","flow":"mobile"}"#, node: plain, client: client)
            #expect(try await flow.step("silent", client: client).problem().code == "step_out_of_order")
        }
    }

    @Test("A flow carries on after a restart", arguments: TestEngine.available.filter { $0 != .sqlite })
    func restart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, location: engine.persistentLocation())
        let (flow, code) = try await node.run { client in
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+14155550113","flow":"mobile"}"#, node: node, client: client)
            #expect(try await flow.step("otp/start", client: client).status == .ok)
            return (flow, try await node.sender.code(to: "+14155550113"))
        }
        let restarted = try await node.reopened()
        try await restarted.run { client in
            let resumed = TestFlow(started: flow.started, node: restarted)
            let done = try await resumed.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            #expect(try await resumed.validate(client: client).success)
        }
    }
}

extension TestFlow {
    /// Starts a flow for `phone` and sends its code (mobile) or link (desktop), as the app's first step does.
    static func sent(
        to phone: String, flow: PossessionFlowType = .mobile, locale: String? = nil, node: TestNode,
        client: some TestClientProtocol
    ) async throws -> TestFlow {
        let locale = locale.map { #","locale":"\#($0)""# } ?? ""
        let started = try await start(
            #"{"phoneNumber":"\#(phone)","flow":"\#(flow.rawValue)"\#(locale)}"#, node: node, client: client)
        let sent = try await started.step(flow == .mobile ? "otp/start" : "link/start", client: client)
        #expect(sent.status == .ok)
        return started
    }

    /// A mobile flow for `phone` that the texted code already proved (not validated yet).
    static func proven(to phone: String, node: TestNode, client: some TestClientProtocol) async throws -> TestFlow {
        let flow = try await sent(to: phone, node: node, client: client)
        let done = try await flow.finish(try await node.sender.code(to: phone), client: client)
        #expect(try done.decode(PossessionState.self).status == .succeeded)
        return flow
    }

    /// Enters `code` (`otp/finish`).
    func finish(_ code: String, client: some TestClientProtocol) async throws -> TestResponse {
        try await step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
    }

    /// The instant link's path (`/p/ver_….secret`) from the newest message to `phone`, after `count` messages.
    func linkPath(to phone: String, count: Int = 1) async throws -> String {
        let message = try #require(try await node.sender.waitForMessages(to: phone, count: count).last)
        let url = try #require(message.body.split(separator: " ").last.map(String.init))
        return try #require(URL(string: url)?.path)
    }

    /// The flow as the server stores it, read the way a step reads it when it starts.
    func record() async throws -> PossessionRecord {
        try #require(
            try await node.verity.possession.storedFlow(id: started.correlationId, in: node.project))
    }
}

extension PossessionAPITests {
    @Test("Start, the texted code, validate: nothing else", arguments: TestEngine.available)
    func plainHappyPath(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550120", node: node, client: client)
            let code = try await node.sender.code(to: "+14155550120")
            let done = try await flow.finish(code, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.phoneNumber == "+14155550120" && validation.method == .otp)
        }
    }

    @Test("After a number change the old number's code proves nothing", arguments: TestEngine.available)
    func oldCodeAfterNumberChange(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550121", node: node, client: client)
            let old = try await node.sender.code(to: "+14155550121")
            let changed = try await flow.step(
                "otp/change-number", json: #"{"phoneNumber":"+14155550122"}"#, client: client)
            #expect(changed.status == .ok)
            let new = try await node.sender.code(to: "+14155550122")
            if old != new {
                let refused = try await flow.finish(old, client: client)
                #expect(refused.status != .ok)
                #expect(try await flow.state(client: client).status != .succeeded)
                _ = try await flow.step("otp/retry", client: client)
            }
            let done = try await flow.finish(new, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            #expect(try await flow.validate(client: client).phoneNumber == "+14155550122")
        }
    }

    /// The moment inside a number change that the audit found: the flow already names the new number while a
    /// request holding the old number's code (or link) finishes. Success must stay bound to the number proven.
    @Test("A code or link checked across a number change cannot prove the new number", arguments: TestEngine.available)
    func numberChangeInBetween(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let service = node.verity.possession
        try await node.run { client in
            let mobile = try await TestFlow.sent(to: "+14155550123", node: node, client: client)
            let code = try await node.sender.code(to: "+14155550123")
            let before = try await mobile.record()
            // The flow's own number-change step, caught before the old code is cancelled in the same unit of work.
            try await service.moveOnly(
                .changeNumber(to: "+14155550124", limit: 3), id: before.id, from: [.otpSent], sent: .code)
            await #expect(throws: VerityError.self) {
                try await service.finishOTP(before, code: code, in: node.project)
            }
            #expect(try await mobile.state(client: client).status == .otpSent)
            let validation = try await mobile.validate(client: client)
            #expect(!validation.success)

            let desktop = try await TestFlow.sent(to: "+14155550125", flow: .desktop, node: node, client: client)
            let path = try await desktop.linkPath(to: "+14155550125")
            try await service.moveOnly(
                .changeNumber(to: "+14155550126", limit: 3), id: desktop.started.correlationId, from: [.linkSent],
                sent: .link)
            #expect(try await client.send(.get, path, key: nil).status == .notFound)
            #expect(try await client.send(.post, path, key: nil).status == .notFound)
            #expect(try await desktop.state(client: client).status == .linkSent)
        }
    }

    @Test("A wrong code after a concurrent retry used the last one fails the flow", arguments: TestEngine.available)
    func wrongCodeDecidedByStoredRetries(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let service = node.verity.possession
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550127", node: node, client: client)
            let digits = wrongCode(for: try await node.sender.code(to: "+14155550127"))
            let wrong = #"{"code":"\#(digits)"}"#
            for _ in 1...2 {
                #expect(try await flow.step("otp/finish", json: wrong, client: client).status == .unauthorized)
                #expect(try await flow.step("otp/retry", client: client).status == .ok)
            }
            // A finish that read the flow now (retries 2)...
            let stale = try await flow.record()
            // ...while another wrong code and the last retry go through.
            #expect(try await flow.step("otp/finish", json: wrong, client: client).status == .unauthorized)
            #expect(try await flow.step("otp/retry", client: client).status == .ok)
            let error = await #expect(throws: VerityError.self) {
                try await service.finishOTP(stale, code: digits, in: node.project)
            }
            #expect(error?.code == .retryLimitReached)
            #expect(try await flow.state(client: client).status == .failed)
        }
    }

    @Test("A code that took its five wrong entries (over resends) fails the flow", arguments: TestEngine.available)
    func deadCodeFailsFlow(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550128", node: node, client: client)
            let wrong = #"{"code":"\#(wrongCode(for: try await node.sender.code(to: "+14155550128")))"}"#
            for _ in 1...3 {
                #expect(try await flow.step("otp/finish", json: wrong, client: client).status == .unauthorized)
                #expect(try await flow.step("otp/resend", client: client).status == .ok)
            }
            #expect(try await flow.step("otp/finish", json: wrong, client: client).status == .unauthorized)
            #expect(try await flow.step("otp/retry", client: client).status == .ok)
            let fifth = try await flow.step("otp/finish", json: wrong, client: client)
            #expect(try fifth.problem().code == "retry_limit_reached")
            #expect(try await flow.state(client: client).status == .failed)
            #expect(try await flow.validate(client: client).reason == "failed")
        }
    }

    @Test("A send the rate limits refuse leaves the flow as it was", arguments: TestEngine.available)
    func refusedSendCountsNothing(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perDestination = RateLimitPolicy(capacity: 1, period: 3600)
            configuration.rateLimits.perNumberBlock = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await node.run { client in
            let one = try await TestFlow.sent(to: "+14155550130", node: node, client: client)
            let two = try await TestFlow.start(
                #"{"phoneNumber":"+14155550130","flow":"mobile"}"#, node: node, client: client)
            for _ in 1...2 {
                // Refused again, not `step_out_of_order`: the first refusal did not move the flow.
                #expect(try await two.step("otp/start", client: client).problem().code == "rate_limited")
            }
            #expect(try await two.state(client: client).status == .created)

            #expect(try await one.step("otp/resend", client: client).problem().code == "rate_limited")
            #expect(try await one.state(client: client).resendsLeft == 3)
            let changed = try await one.step(
                "otp/change-number", json: #"{"phoneNumber":"+14155550131"}"#, client: client)
            #expect(try changed.decode(PossessionState.self).numberChangesLeft == 2)
            // The number block (…130 to …131 used it twice) refuses a third number; the flow keeps …131.
            let refused = try await one.step(
                "otp/change-number", json: #"{"phoneNumber":"+14155550132"}"#, client: client)
            #expect(try refused.problem().code == "rate_limited")
            let state = try await one.state(client: client)
            #expect(state.numberChangesLeft == 2 && state.maskedPhoneNumber?.hasSuffix("31") == true)
            let code = try await node.sender.code(to: "+14155550131")
            let done = try await one.finish(code, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            #expect(try await one.validate(client: client).phoneNumber == "+14155550131")
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+14155550130").count == 1)
            #expect(node.sender.messages(to: "+14155550132").isEmpty)
        }
    }

    @Test(
        "A desktop flow for a test number sends nothing and succeeds with instant_link; a change to one is ordinary",
        arguments: TestEngine.available)
    func desktopTestNumber(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for number in ["+16505551235", "+16505551236"] {
                let added = try await client.send(
                    .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"\#(number)","code":"123456"}"#)
                #expect(added.status.code < 300)
            }
            let flow = try await TestFlow.start(
                #"{"phoneNumber":"+16505551235","flow":"desktop"}"#, node: node, client: client)
            let started = try await flow.step("link/start", client: client).decode(PossessionState.self)
            #expect(started.status == .succeeded)
            #expect(try await flow.step("link/resend", client: client).problem().code == "step_out_of_order")
            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.method == .instantLink && validation.testNumber)

            // A flow the backend started for a real number never becomes a test-number flow: a change to a test
            // number sends a real link, and the old one dies.
            let other = try await TestFlow.sent(to: "+14155550133", flow: .desktop, node: node, client: client)
            let first = try await other.linkPath(to: "+14155550133")
            let changed = try await other.step(
                "otp/change-number", json: #"{"phoneNumber":"+16505551236"}"#, client: client)
            #expect(try changed.decode(PossessionState.self).status == .linkSent)
            #expect(try await client.send(.get, first, key: nil).status == .notFound)
            _ = try await other.linkPath(to: "+16505551236")
            let pending = try await other.validate(client: client)
            #expect(!pending.success && pending.reason == "pending" && pending.phoneNumber == "+16505551236")
            #expect(node.sender.messages(to: "+16505551235").isEmpty)
        }
    }

    @Test("Desktop: link/resend sends 3 times, the 4th is refused", arguments: TestEngine.available)
    func linkResendLimit(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(to: "+14155550134", flow: .desktop, node: node, client: client)
            for left in (0..<3).reversed() {
                let resent = try await flow.step("link/resend", client: client)
                #expect(try resent.decode(PossessionState.self).resendsLeft == left)
            }
            let fourth = try await flow.step("link/resend", client: client)
            #expect(fourth.status == .tooManyRequests)
            #expect(try fourth.problem().code == "resend_limit_reached")
            let path = try await flow.linkPath(to: "+14155550134", count: 4)
            #expect(try await client.send(.post, path, key: nil).status == .ok)
            #expect(try await flow.validate(client: client).success)
        }
    }

    @Test(
        "Desktop: a number change kills the old link (its page says so); the new one proves the new number",
        arguments: TestEngine.available)
    func desktopChangeNumber(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.sent(
                to: "+14155550135", flow: .desktop, locale: "fr", node: node, client: client)
            let old = try await flow.linkPath(to: "+14155550135")
            let changed = try await flow.step(
                "otp/change-number", json: #"{"phoneNumber":"+14155550136"}"#, client: client)
            #expect(try changed.decode(PossessionState.self).numberChangesLeft == 2)
            let dead = try await client.send(.get, old, key: nil, headers: [.acceptLanguage: "fr-FR,fr;q=0.9"])
            #expect(dead.status == .notFound)
            #expect(String(buffer: dead.body).contains("Ce lien a expiré ou a déjà été utilisé."))
            #expect(try await client.send(.post, old, key: nil).status == .notFound)
            let new = try await flow.linkPath(to: "+14155550136")
            #expect(try await client.send(.post, new, key: nil).status == .ok)
            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.phoneNumber == "+14155550136")
        }
    }

    @Test("A desktop link lives as long as its flow, not just a code's two minutes", arguments: TestEngine.available)
    func linkLifetime(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let late = try await TestFlow.sent(to: "+14155550137", flow: .desktop, node: node, client: client)
            let path = try await late.linkPath(to: "+14155550137")
            let expired = try await TestFlow.sent(to: "+14155550138", flow: .desktop, node: node, client: client)
            let gone = try await expired.linkPath(to: "+14155550138")
            let linkExpiresAt = try #require(try await late.state(client: client).codeExpiresAt)
            #expect(abs(linkExpiresAt.timeIntervalSince(late.started.expiresAt)) < 1)

            node.clock.advance(by: 600)
            #expect(try await client.send(.get, path, key: nil).status == .ok)
            #expect(try await client.send(.post, path, key: nil).status == .ok)
            #expect(try await late.validate(client: client).success)
            node.clock.advance(by: 301)
            #expect(try await client.send(.get, gone, key: nil).status == .notFound)
            #expect(try await expired.validate(client: client).reason == "expired")
        }
    }

    @Test(
        "The hosted page speaks the flow's language; a dead link's page follows Accept-Language",
        arguments: TestEngine.available)
    func pageLocales(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pages: [(locale: String, button: String, done: String, invalid: String)] = [
            (
                "en", "Yes, this is my phone", "Done. You can go back to Acme",
                "This link has expired or was already used."
            ),
            ("es", "Sí, es mi teléfono", "Listo. Puedes volver a Acme", "Este enlace ha caducado o ya se usó."),
            (
                "fr", "Oui, c&#39;est mon téléphone", "C&#39;est fait. Vous pouvez revenir à Acme",
                "Ce lien a expiré ou a déjà été utilisé."
            ),
            (
                "de", "Ja, das ist mein Telefon", "Fertig. Sie können zu Acme",
                "Dieser Link ist abgelaufen oder wurde bereits verwendet."
            ),
        ]
        try await node.run { client in
            for (index, page) in pages.enumerated() {
                let phone = "+1415555014\(index)"
                let flow = try await TestFlow.start(
                    #"{"phoneNumber":"\#(phone)","flow":"desktop","locale":"\#(page.locale)"}"#, node: node,
                    client: client)
                _ = try await flow.step("link/start", client: client)
                let path = try await flow.linkPath(to: phone)
                let shown = String(buffer: try await client.send(.get, path, key: nil).body)
                #expect(
                    shown.contains(#"<html lang="\#(page.locale)">"#) && shown.contains(page.button), "\(page.locale)")
                let done = String(buffer: try await client.send(.post, path, key: nil).body)
                #expect(done.contains(page.done), "\(page.locale)")
                // The used link names no flow any more: its page takes the browser's language.
                let used = try await client.send(
                    .get, path, key: nil, headers: [.acceptLanguage: "\(page.locale)-XX;q=0.9, en;q=0.1"])
                #expect(used.status == .notFound)
                #expect(String(buffer: used.body).contains(page.invalid), "\(page.locale)")
                #expect(String(buffer: used.body).contains(#"<html lang="\#(page.locale)">"#), "\(page.locale)")
            }
            let unknown = try await client.send(.get, "/p/ver_nope.abc", key: nil, headers: [.acceptLanguage: "ja-JP"])
            #expect(String(buffer: unknown.body).contains(pages[0].invalid))
            let none = try await client.send(.get, "/p/ver_nope.abc", key: nil)
            #expect(String(buffer: none.body).contains(#"<html lang="en">"#))
        }
    }

    @Test("Validate answers only within the flow's lifetime", arguments: TestEngine.available)
    func validateAfterExpiry(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let flow = try await TestFlow.proven(to: "+14155550145", node: node, client: client)
            node.clock.advance(by: 901)
            let late = try await flow.validate(client: client)
            #expect(!late.success && late.reason == "expired")
            #expect(late.phoneNumber == "+14155550145" && late.method == .otp)
        }
    }
}
