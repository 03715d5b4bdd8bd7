import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

/// A possession flow proven by the carrier (CAMARA Number Verification) against ``CamaraStandIn``, over real HTTP,
/// and every way it falls back to a code.
@Suite("Carrier check (CAMARA Number Verification)")
struct CarrierCheckTests {
    static let number = "+14155550199"
    static let startJSON = #"{"phoneNumber":"+14155550199","flow":"mobile"}"#

    /// A node whose project's carrier check points at `standIn`.
    static func node(
        _ engine: TestEngine, standIn baseURL: String, format: CarrierCheckSettings.NumberFormat = .hashed,
        timeout: Int = 5
    ) async throws -> TestNode {
        var settings = ProjectSettings()
        settings.carrierCheck = CamaraStandIn.settings(baseURL: baseURL, format: format, timeout: timeout)
        return try await TestNode.make(engine, settings: settings)
    }

    /// Runs `body` on a live node whose project's carrier check points at `standIn`, while the stand-in runs.
    static func withCarrier(
        _ engine: TestEngine, _ standIn: CamaraStandIn, format: CarrierCheckSettings.NumberFormat = .hashed,
        timeout: Int = 5, _ body: @escaping @Sendable (TestNode, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await standIn.run { baseURL in
            let node = try await node(engine, standIn: baseURL, format: format, timeout: timeout)
            try await node.run(.live) { client in try await body(node, client) }
        }
    }

    /// What the app does with the authorization URL: opens it (over mobile data), and follows the operator's
    /// redirect to Verity's callback. Returns the callback's path and query.
    static func openOverMobileData(_ url: String) async throws -> String {
        // A client that stops at the redirect, so the test can send it to the node under test.
        let response = try await HTTPEventSender.webhookClient.execute(
            HTTPClientRequest(url: url), timeout: .seconds(10))
        #expect(response.status == .found)
        let callback = try #require(response.headers.first(name: "location").flatMap(URLComponents.init(string:)))
        #expect(callback.path == CamaraNumberVerification.callbackPath)
        return callback.percentEncodedPath + "?" + (callback.percentEncodedQuery ?? "")
    }

    /// Starts a flow with a carrier check and runs its front channel; the callback's answer.
    static func startAndOpen(node: TestNode, client: some TestClientProtocol) async throws
        -> (flow: TestFlow, callback: TestResponse)
    {
        let flow = try await TestFlow.start(startJSON, node: node, client: client)
        let url = try #require(flow.started.carrierAuthorizationUrl)
        let callback = try await client.send(.get, try await openOverMobileData(url), key: nil)
        return (flow, callback)
    }

    @Test(
        "The carrier confirms the number: the flow succeeds with method silent, counted as a carrier proof",
        arguments: TestEngine.available)
    func silentCompletion(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        try await Self.withCarrier(engine, standIn) { node, client in
            let (flow, callback) = try await Self.startAndOpen(node: node, client: client)
            #expect(callback.status == .ok)
            let state = try callback.decode(PossessionState.self)
            #expect(state.status == .succeeded && state.carrierCheck == .verified)
            let validation = try await flow.validate(client: client)
            #expect(validation.success && validation.method == .silent)
            #expect(node.sender.messages().isEmpty)
            let metrics = String(buffer: try await client.send(.get, "/metrics", key: nil).body)
            #expect(
                metrics.contains(
                    #"verity_possession_proofs_total{project="\#(node.project.id)",proof="carrier"} 1"#))
            // Hashed by default: the operator never sees the number itself.
            let body = try #require(standIn.verifyRequests.first?.body)
            let sent = try JSONSerialization.jsonObject(with: Data(body)) as? [String: String]
            #expect(sent == ["hashedPhoneNumber": Hex.encode(SHA256.hash(data: Data(Self.number.utf8)))])
            #expect(!node.logs.text.contains(Self.number))
        }
    }

    @Test("A plain-number project sends phoneNumber; a code proof counts as code", arguments: TestEngine.available)
    func plainNumber(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        try await Self.withCarrier(engine, standIn, format: .plain) { node, client in
            let (_, callback) = try await Self.startAndOpen(node: node, client: client)
            #expect(try callback.decode(PossessionState.self).carrierCheck == .verified)
            let body = try #require(standIn.verifyRequests.first?.body)
            #expect(
                try JSONSerialization.jsonObject(with: Data(body)) as? [String: String] == ["phoneNumber": Self.number])
        }
    }

    enum Failure: String, CaseIterable, Sendable {
        case otherNumber, slow, deniedAuthorization, refusedCode, notOverMobileNetwork, operatorError
    }

    @Test(
        "false, a timeout, a failed authorization step or an operator error leave the flow to a code, and say so",
        arguments: TestEngine.available, Failure.allCases)
    func fallsBackToCode(engine: TestEngine, failure: Failure) async throws {
        let standIn = CamaraStandIn()
        let expected: CarrierCheckStatus
        switch failure {
        case .otherNumber:
            standIn.script.devicePhoneNumber = "+14155550198"
            expected = .notVerified
        case .slow:
            standIn.script.verifyDelay = .seconds(4)
            expected = .timedOut
        case .deniedAuthorization:
            standIn.script.authorizationError = "access_denied"
            expected = .authorizationFailed
        case .refusedCode:
            standIn.script.refuseCode = true
            expected = .authorizationFailed
        case .notOverMobileNetwork:
            standIn.script.verifyError = (403, "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK")
            expected = .authorizationFailed
        case .operatorError:
            standIn.script.verifyError = (503, "UNAVAILABLE")
            expected = .unavailable
        }
        try await Self.withCarrier(engine, standIn, timeout: 1) { node, client in
            let (flow, callback) = try await Self.startAndOpen(node: node, client: client)
            #expect(callback.status == .ok)
            let state = try callback.decode(PossessionState.self)
            #expect(state.status == .created && state.carrierCheck == expected)
            #expect(try await flow.state(client: client).carrierCheck == expected)
            // The code works as without a carrier check.
            #expect(try await flow.step("otp/start", client: client).status == .ok)
            let code = try await node.sender.code(to: Self.number)
            let done = try await flow.step("otp/finish", json: #"{"code":"\#(code)"}"#, client: client)
            #expect(try done.decode(PossessionState.self).status == .succeeded)
            #expect(try await flow.validate(client: client).method == .otp)
            let metrics = String(buffer: try await client.send(.get, "/metrics", key: nil).body)
            #expect(
                metrics.contains(#"verity_possession_proofs_total{project="\#(node.project.id)",proof="code"} 1"#))
            #expect(!metrics.contains(#"proof="carrier""#))
        }
    }

    @Test("A state works once; a foreign or missing one is refused", arguments: TestEngine.available)
    func replayedOrForeignState(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        try await Self.withCarrier(engine, standIn) { node, client in
            // The operator says no; replaying its redirect once it would say yes proves nothing.
            standIn.script.devicePhoneNumber = "+14155550198"
            let flow = try await TestFlow.start(Self.startJSON, node: node, client: client)
            let callback = try await Self.openOverMobileData(try #require(flow.started.carrierAuthorizationUrl))
            let first = try await client.send(.get, callback, key: nil)
            #expect(try first.decode(PossessionState.self).carrierCheck == .notVerified)
            standIn.script.devicePhoneNumber = Self.number
            let replayed = try await client.send(.get, callback, key: nil)
            #expect(replayed.status == .notFound)
            #expect(try replayed.problem().code == "possession_not_found")
            let foreign = try await client.send(
                .get, "\(CamaraNumberVerification.callbackPath)?code=x&state=\(UUID().uuidString)", key: nil)
            #expect(try foreign.problem().code == "possession_not_found")
            let missing = try await client.send(.get, "\(CamaraNumberVerification.callbackPath)?code=x", key: nil)
            #expect(missing.status == .badRequest)
            // The operator was asked once, and the flow waits for a code.
            #expect(standIn.verifyRequests.count == 1)
            #expect(try await flow.state(client: client).status == .created)
        }
    }

    @Test(
        "Another project's flow: no carrier check without its own settings, and its flows stay its own",
        arguments: TestEngine.available)
    func anotherProject(engine: TestEngine) async throws {
        let standIn = CamaraStandIn()
        try await Self.withCarrier(engine, standIn) { node, client in
            let other = try await node.otherProject()
            let theirs = try await client.send(.post, "/v1/possession", key: other.apiKey, json: Self.startJSON)
            #expect(try theirs.decode(StartedPossession.self).carrierAuthorizationUrl == nil)
            let (flow, callback) = try await Self.startAndOpen(node: node, client: client)
            #expect(try callback.decode(PossessionState.self).status == .succeeded)
            let foreign = try await client.send(
                .post, "/v1/possession/\(flow.started.correlationId)/validate", key: other.apiKey)
            #expect(try foreign.problem().code == "possession_not_found")
            // A desktop flow, or one without the backend's number, has no carrier check either.
            for json in [#"{"phoneNumber":"+14155550199","flow":"desktop"}"#, #"{"flow":"mobile"}"#] {
                let started = try await client.send(.post, "/v1/possession", key: node.apiKey, json: json)
                #expect(try started.decode(StartedPossession.self).carrierAuthorizationUrl == nil)
            }
        }
    }

    @Test(
        "The client secret is sealed at rest; the endpoints follow the webhook address rules",
        arguments: TestEngine.available)
    func settingsAtRest(engine: TestEngine) async throws {
        let node = try await Self.node(engine, standIn: "https://aggregator.example.net")
        let stored = try await node.verity.database.execute { sql in
            try await sql.raw(
                "SELECT carrier_check, carrier_client_secret FROM projects WHERE id = \(bind: node.project.id)"
            ).first().map {
                (
                    try $0.decode(column: "carrier_check", as: String.self),
                    try $0.decode(column: "carrier_client_secret", as: String.self)
                )
            }
        }
        let (json, secret) = try #require(stored)
        #expect(!json.contains(CamaraStandIn.clientSecret) && !secret.contains(CamaraStandIn.clientSecret))
        #expect(
            try await node.verity.admin.project(id: node.project.id).settings.carrierCheck.clientSecret
                == CamaraStandIn.clientSecret)
        try await node.verity.database.close()

        let strict = try await TestNode.make(engine) { $0.webhookAddresses.allowPrivate = false }
        for inward in ["http://127.0.0.1:9/token", "http://169.254.169.254/token", "http://localhost/token"] {
            let change = try ProjectSettingsChange([
                .carrierCheck: "on", .carrierAuthorizationUrl: "https://aggregator.example.net/authorize",
                .carrierTokenUrl: inward, .carrierApiUrl: "https://aggregator.example.net/number-verification/v1",
                .carrierClientId: "id", .carrierClientSecret: "secret",
            ])
            await #expect(throws: ConfigurationError.self) {
                try await strict.verity.admin.updateProject(
                    id: strict.project.id, name: nil, settings: change.apply(to:))
            }
        }
        try await strict.verity.database.close()
    }
}
