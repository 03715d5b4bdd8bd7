import Foundation
import Testing
import VerityCore
import VerityKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's screens in a test: answers from a script, and a record of what each screen was shown.
actor ScriptedScreens: PossessionUI {
    private var numbers: [String?]
    private var codeActions: [@Sendable () async throws -> PossessionCodeAction]
    private var linkActions: [@Sendable () async throws -> PossessionLinkAction]
    private(set) var errors: [PossessionError?] = []
    private(set) var states: [PossessionState] = []

    init(
        numbers: [String?] = [], codes: [@Sendable () async throws -> PossessionCodeAction] = [],
        links: [@Sendable () async throws -> PossessionLinkAction] = []
    ) {
        self.numbers = numbers
        self.codeActions = codes
        self.linkActions = links
    }

    func phoneNumber(error: PossessionError?) async -> String? {
        errors.append(error)
        return numbers.isEmpty ? nil : numbers.removeFirst()
    }

    func codeAction(state: PossessionState, error: PossessionError?) async -> PossessionCodeAction {
        states.append(state)
        errors.append(error)
        guard !codeActions.isEmpty else { return .cancel }
        return (try? await codeActions.removeFirst()()) ?? .cancel
    }

    func linkAction(state: PossessionState, error: PossessionError?) async -> PossessionLinkAction {
        states.append(state)
        errors.append(error)
        guard !linkActions.isEmpty else { return .cancel }
        return (try? await linkActions.removeFirst()()) ?? .cancel
    }
}

/// Possession checks as an app (VerityKit's `VerityPossession` over URLSession), a backend (API key over HTTP) and a
/// phone's browser (the hosted instant-link page) see them, against a live server.
@Suite("Possession end to end")
struct PossessionEndToEndTests {
    static func runner(_ server: LiveServer) -> VerityPossession {
        VerityPossession(configuration: VerityConfiguration(baseURL: server.baseURL))
    }

    /// The phone's browser: opens the newest instant link to `phone` (GET, then the form's POST), in the background.
    static func confirmLatestLink(_ server: LiveServer, to phone: String) async throws {
        let text = try await server.latestMessage(to: phone)
        let sent = try #require(text.split(separator: " ").last.flatMap { URL(string: String($0)) })
        let link = server.baseURL.appendingPathComponent(sent.path)
        Task {
            _ = try await URLSession.shared.data(from: link)
            var confirm = URLRequest(url: link)
            confirm.httpMethod = "POST"
            let (_, response) = try await URLSession.shared.data(for: confirm)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }

    @Test("Mobile: start, the code, validate; nothing else", arguments: TestEngine.available)
    func happyPath(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550110", flow: .mobile))
            let screens = ScriptedScreens(codes: [{ .submit(code: try await server.code(to: "+14155550110")) }])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded)
            #expect(await screens.errors == [nil])
            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.phoneNumber == "+14155550110")
        }
    }

    @Test(
        "Desktop: three link resends, the fourth is refused; the newest link confirms", arguments: TestEngine.available)
    func linkResends(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550111", flow: .desktop))
            let screens = ScriptedScreens(links: [
                { .resend }, { .resend }, { .resend }, { .resend },
                {
                    try await Self.confirmLatestLink(server, to: "+14155550111")
                    return .wait(seconds: 20)
                },
            ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded && outcome.resendsLeft == 0)
            #expect(await screens.errors == [nil, nil, nil, nil, .resendLimitReached])
            #expect(try await server.messageCount(to: "+14155550111") == 4)
            #expect(try await server.backend.validatePossession(started.correlationId).success)
        }
    }

    @Test("Desktop: change the number; the link to the new number proves it", arguments: TestEngine.available)
    func desktopChangeNumber(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550112", flow: .desktop))
            let screens = ScriptedScreens(links: [
                { .changeNumber("+14155550113") },
                {
                    try await Self.confirmLatestLink(server, to: "+14155550113")
                    return .wait(seconds: 20)
                },
            ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded && outcome.numberChangesLeft == 2)
            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.phoneNumber == "+14155550113")
        }
    }

    @Test("Desktop with a test number: nothing is sent, the check succeeds at once", arguments: TestEngine.available)
    func desktopTestNumber(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            try await server.backend.addTestNumber("+16505551237", code: "123456")
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+16505551237", flow: .desktop))
            let screens = ScriptedScreens()
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded)
            #expect(await screens.states.isEmpty)
            #expect(try await server.messageCount(to: "+16505551237") == 0)
            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.method == .instantLink)
        }
    }

    @Test(
        "Desktop: a wait longer than the transport's timeout still answers (the wait request gets its own)",
        arguments: TestEngine.available)
    func waitOutlastsTransportTimeout(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550114", flow: .desktop))
            let runner = VerityPossession(
                configuration: VerityConfiguration(baseURL: server.baseURL),
                transport: LongPollTransport(longPolls: URLSessionTransport(timeout: 1), others: URLSessionTransport()))
            let screens = ScriptedScreens(links: [{ .wait(seconds: 3) }])
            // The wait ends unconfirmed after 3 s and the screen is asked again (then cancels); a request timed out
            // after the transport's 1 s would have ended the check with a network error instead.
            await #expect(throws: PossessionError.cancelled) {
                try await runner.authenticate(authToken: started.authToken, ui: screens)
            }
            #expect(await screens.states.map(\.status) == [.linkSent, .linkSent])
        }
    }

    @Test("Mobile: a wrong code, then the right one; validate succeeds once", arguments: TestEngine.available)
    func wrongThenRight(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550100", flow: .mobile))
            let screens = ScriptedScreens(codes: [
                { .submit(code: "000000" == (try await server.code(to: "+14155550100")) ? "111111" : "000000") },
                { .submit(code: try await server.code(to: "+14155550100")) },
            ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded)
            #expect(await screens.errors == [nil, .wrongCode(retriesLeft: 3)])

            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.method == .otp && validation.phoneNumber == "+14155550100")
            let twice = try await server.backend.validatePossession(started.correlationId)
            #expect(!twice.success && twice.reason == "already_validated")

            // The token ran its flow; it cannot run it again.
            await #expect(throws: PossessionError.alreadyFinished) {
                try await Self.runner(server).authenticate(authToken: started.authToken, ui: ScriptedScreens())
            }
        }
    }

    @Test("Three resends, then the fourth is refused; the code still works", arguments: TestEngine.available)
    func resends(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(StartPossessionRequest(flow: .mobile))
            let screens = ScriptedScreens(
                numbers: ["not a number", "+14155550101"],
                codes: [
                    { .resend }, { .resend }, { .resend }, { .resend },
                    {
                        .submit(code: try await server.code(to: "+14155550101", count: 4))
                    },
                ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded && outcome.resendsLeft == 0)
            #expect(await screens.errors == [nil, .invalidPhoneNumber, nil, nil, nil, nil, .resendLimitReached])
            #expect(try await server.messageCount(to: "+14155550101") == 4)
            #expect(try await server.backend.validatePossession(started.correlationId).success)
        }
    }

    @Test("Change the number twice; the code of the last number proves it", arguments: TestEngine.available)
    func changeNumber(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550102", flow: .mobile))
            let screens = ScriptedScreens(codes: [
                { .changeNumber("+14155550103") }, { .changeNumber("+14155550104") },
                { .submit(code: try await server.code(to: "+14155550104")) },
            ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.numberChangesLeft == 1)
            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.phoneNumber == "+14155550104")
        }
    }

    @Test("An expired token ends the check; validate says expired", arguments: TestEngine.available)
    func expiredToken(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(phoneNumber: "+14155550105", flow: .mobile))
            server.clock.advance(by: 901)
            await #expect(throws: PossessionError.expired) {
                try await Self.runner(server).authenticate(authToken: started.authToken, ui: ScriptedScreens())
            }
            #expect(try await server.backend.validatePossession(started.correlationId).reason == "expired")
            await #expect(throws: PossessionError.invalidToken) {
                try await Self.runner(server).authenticate(authToken: "vpt_pos_forged.abc", ui: ScriptedScreens())
            }
        }
    }

    @Test(
        "Desktop: the phone's browser opens the instant link and confirms; the desktop's wait ends",
        arguments: TestEngine.available)
    func instantLink(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let started = try await server.backend.startPossession(
                StartPossessionRequest(
                    phoneNumber: "+14155550106", flow: .desktop, finalTargetUrl: "https://shop.example/done"))
            let screens = ScriptedScreens(links: [
                {
                    // The phone: the link from the SMS, opened the way a browser does (GET, then the form's POST).
                    let text = try await server.latestMessage(to: "+14155550106")
                    let sent = try #require(text.split(separator: " ").last.flatMap { URL(string: String($0)) })
                    // The message links to VERITY_PUBLIC_URL (default port 8080); this server listens elsewhere.
                    let link = server.baseURL.appendingPathComponent(sent.path)
                    Task {
                        let (page, _) = try await URLSession.shared.data(from: link)
                        #expect(String(decoding: page, as: UTF8.self).contains("Yes, this is my phone"))
                        var confirm = URLRequest(url: link)
                        confirm.httpMethod = "POST"
                        let (done, _) = try await URLSession.shared.data(for: confirm)
                        #expect(String(decoding: done, as: UTF8.self).contains("https://shop.example/done"))
                    }
                    return .wait(seconds: 20)
                }
            ])
            let outcome = try await Self.runner(server).authenticate(authToken: started.authToken, ui: screens)
            #expect(outcome.status == .succeeded)
            let validation = try await server.backend.validatePossession(started.correlationId)
            #expect(validation.success && validation.method == .instantLink)
            #expect(!(try await server.backend.validatePossession(started.correlationId).success))
        }
    }
}

/// Sends the requests that carry their own timeout (long polls) through `longPolls` and the others through `others`,
/// so that only the long poll meets the short default timeout under test, however slow a loaded machine makes the
/// other requests.
private struct LongPollTransport: Transport {
    let longPolls: URLSessionTransport
    let others: URLSessionTransport

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await (request.timeout == nil ? others : longPolls).send(request)
    }
}
