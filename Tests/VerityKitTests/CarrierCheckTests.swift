import Foundation
import Testing
import VerityCore
import VerityKit

/// A ``CellularConnection`` that answers each exchange from a script and records what it was sent.
actor ScriptedCellularConnection: CellularConnection {
    enum Step: Sendable {
        /// Answers these bytes (an HTTP/1.1 response head).
        case answer(String)
        /// Throws.
        case fail(CarrierCheckError)
        /// Never answers; ends when its task is cancelled.
        case hang
    }

    private var steps: [Step]
    /// Each exchange, as `host:port` and the request text.
    private(set) var exchanges: [(endpoint: String, request: String)] = []

    init(_ steps: [Step]) {
        self.steps = steps
    }

    func exchange(_ request: Data, host: String, port: Int) async throws -> Data {
        exchanges.append(("\(host):\(port)", String(decoding: request, as: UTF8.self)))
        switch steps.isEmpty ? .fail(.failed("script exhausted")) : steps.removeFirst() {
        case .answer(let text): return Data(text.utf8)
        case .fail(let error): throw error
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            throw CarrierCheckError.failed("not cancelled")
        }
    }

    static func redirect(to location: String) -> Step {
        .answer("HTTP/1.1 302 Found\r\nLocation: \(location)\r\nContent-Length: 0\r\n\r\n")
    }

    static let ok = Step.answer("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>Done</p>")
}

@Suite("The carrier check, with the code as its fallback")
struct CarrierCheckTests {
    static let authorizationURL = "https://operator.example/authorize?client_id=verity&state=s1"
    static let callback = "https://verity.test/v1/carrier-check/callback?code=c0de&state=s1"

    static func possession(
        _ transport: RecordingTransport, _ connection: ScriptedCellularConnection, timesOut: Bool = false
    ) throws -> VerityPossession {
        // The timeout is a sleep that ends at once, or one that ends only when the step is over.
        let sleep: @Sendable (Duration) async throws -> Void = { _ in
            if !timesOut { try await Task.sleep(for: .seconds(3600)) }
        }
        return VerityPossession(
            configuration: VerityConfiguration(baseURL: try Fixture.baseURL()), transport: transport,
            carrierCheck: CarrierCheckOptions(connection: connection, sleep: sleep))
    }

    /// A mobile flow as the server answers it, with its carrier check where it stands.
    static func state(_ status: PossessionStatus, carrier: CarrierCheckStatus?) throws -> TransportResponse {
        try Fixture.json(
            PossessionState(
                correlationId: "pos_abc", flow: .mobile, status: status, maskedPhoneNumber: "+1•••••••0100",
                phoneNumberNeeded: false, resendsLeft: 3, retriesLeft: 3, numberChangesLeft: 3, codeExpiresAt: nil,
                expiresAt: Fixture.now.addingTimeInterval(900), carrierCheck: carrier))
    }

    static func authenticate(
        _ transport: RecordingTransport, _ connection: ScriptedCellularConnection, timesOut: Bool = false,
        ui: ScriptScreens = ScriptScreens()
    ) async throws -> PossessionState {
        try await possession(transport, connection, timesOut: timesOut).authenticate(
            authToken: PossessionRunnerTests.token, carrierAuthorizationUrl: URL(string: authorizationURL), ui: ui)
    }

    @Test("the operator's page is opened over mobile data, its redirects followed to the callback, and no code is sent")
    func confirmedByCarrier() async throws {
        let transport = RecordingTransport()
        await transport.enqueue(try Self.state(.created, carrier: .pending))
        await transport.enqueue(try Self.state(.succeeded, carrier: .verified))
        let connection = ScriptedCellularConnection([
            ScriptedCellularConnection.redirect(to: "https://aggregator.example:8443/nv/auth?session=42"),
            ScriptedCellularConnection.redirect(to: "/nv/confirm"),
            ScriptedCellularConnection.redirect(to: Self.callback),
            ScriptedCellularConnection.ok,
        ])
        let outcome = try await Self.authenticate(transport, connection)
        #expect(outcome.status == .succeeded)

        // The app reads the flow before and after the operator's page, and asks the server for nothing else.
        let requests = await transport.requests
        #expect(requests.map(\.url.path) == ["/v1/possession/pos_abc", "/v1/possession/pos_abc"])
        #expect(requests.allSatisfy { $0.method == .get })
        #expect(requests[1].value(forHeader: "Authorization") == "Bearer \(PossessionRunnerTests.token)")
        let exchanges = await connection.exchanges
        #expect(
            exchanges.map(\.endpoint) == [
                "operator.example:443", "aggregator.example:8443", "aggregator.example:8443", "verity.test:443",
            ])
        #expect(
            exchanges[0].request.hasPrefix(
                "GET /authorize?client_id=verity&state=s1 HTTP/1.1\r\nHost: operator.example\r\n"))
        #expect(exchanges[0].request.contains("\r\nConnection: close\r\n"))
        #expect(exchanges[0].request.hasSuffix("\r\n\r\n"))
        #expect(exchanges[1].request.hasPrefix("GET /nv/auth?session=42 HTTP/1.1\r\nHost: aggregator.example:8443\r\n"))
        #expect(exchanges[2].request.hasPrefix("GET /nv/confirm HTTP/1.1\r\n"))
        #expect(exchanges[3].request.hasPrefix("GET /v1/carrier-check/callback?code=c0de&state=s1 HTTP/1.1\r\n"))
    }

    enum Fallback: String, CaseIterable, Sendable {
        case noCellularPath, timeout, notConfirmed, leavesHTTPS, endsOffTheCallback, redirectLoop, projectWithout
    }

    @Test("the code is sent instead when the carrier check cannot confirm the number", arguments: Fallback.allCases)
    func fallsBackToCode(_ fallback: Fallback) async throws {
        let transport = RecordingTransport()
        // A project without the carrier check answers no `carrierCheck`, and no URL to open.
        await transport.enqueue(try Self.state(.created, carrier: fallback == .projectWithout ? nil : .pending))
        var steps: [ScriptedCellularConnection.Step] = []
        switch fallback {
        case .noCellularPath: steps = [.fail(.noCellularPath)]
        case .timeout: steps = [ScriptedCellularConnection.redirect(to: "https://aggregator.example/nv"), .hang]
        case .notConfirmed:
            steps = [ScriptedCellularConnection.redirect(to: Self.callback), ScriptedCellularConnection.ok]
        case .leavesHTTPS: steps = [ScriptedCellularConnection.redirect(to: "http://operator.example/he")]
        case .endsOffTheCallback: steps = [ScriptedCellularConnection.ok]
        case .redirectLoop:
            steps = Array(repeating: ScriptedCellularConnection.redirect(to: Self.authorizationURL), count: 20)
        case .projectWithout: break
        }
        // The operator said no: the server leaves the flow to a code and says why.
        if fallback == .notConfirmed { await transport.enqueue(try Self.state(.created, carrier: .notVerified)) }
        await transport.enqueue(try Self.state(.otpSent, carrier: nil))
        let connection = ScriptedCellularConnection(steps)

        let screens = ScriptScreens(codes: [.cancel])
        await #expect(throws: PossessionError.cancelled) {
            try await Self.authenticate(transport, connection, timesOut: fallback == .timeout, ui: screens)
        }
        let requests = await transport.requests
        #expect(requests.last?.url.path == "/v1/possession/pos_abc/otp/start")
        #expect(requests.filter { $0.method == .post }.count == 1)
        #expect(await connection.exchanges.count <= CarrierFrontChannelLimits.maxExchanges)
        if fallback == .projectWithout { #expect(await connection.exchanges.isEmpty) }
        #expect(await screens.errors == [nil])
    }

    @Test("a desktop flow goes straight to the link, even with an authorization URL")
    func onlyOnAPhone() async throws {
        let transport = RecordingTransport()
        await transport.enqueue(try PossessionRunnerTests.state(.desktop, .created))
        await transport.enqueue(try PossessionRunnerTests.state(.desktop, .linkSent))
        let connection = ScriptedCellularConnection([])
        await #expect(throws: PossessionError.cancelled) {
            try await Self.authenticate(transport, connection)
        }
        #expect(await transport.requests.map(\.url.path).last == "/v1/possession/pos_abc/link/start")
        #expect(await connection.exchanges.isEmpty)
    }
}

/// The front channel's limits as the tests see them: a first request and at most ten redirects.
enum CarrierFrontChannelLimits {
    static let maxExchanges = 11
}
