import Foundation
import Testing
import VerityCore

@testable import VerityKit

@Suite("Possession errors and tokens")
struct PossessionErrorTests {
    @Test(
        "Server refusals map to the errors a possession UI shows",
        arguments: [
            (ErrorCode.resendLimitReached, PossessionError.resendLimitReached),
            (.retryLimitReached, .retryLimitReached), (.numberChangeLimitReached, .numberChangeLimitReached),
            (.possessionExpired, .expired), (.unauthorized, .invalidToken), (.stepOutOfOrder, .stepOutOfOrder),
            (.rateLimited, .rateLimited), (.invalidPhoneNumber, .invalidPhoneNumber),
            (.phoneNumberRequired, .invalidPhoneNumber), (.verificationNotFound, .codeExpired),
        ])
    func mapping(code: ErrorCode, expected: PossessionError) {
        #expect(PossessionError(.server(Problem(code: code))) == expected)
    }

    @Test("Each error has its own stable code; a forged token and a refused step end the check or not")
    func codes() {
        let all: [PossessionError] = [
            .wrongCode(retriesLeft: 1), .invalidPhoneNumber, .codeExpired, .resendLimitReached, .retryLimitReached,
            .numberChangeLimitReached, .expired, .alreadyFinished, .stepOutOfOrder, .invalidToken, .rateLimited,
            .cancelled, .other(.network("down")),
        ]
        #expect(Set(all.map(\.code)).count == all.count)
        #expect(PossessionError.stepOutOfOrder.code == "step_out_of_order")
        #expect(PossessionError.invalidToken.code == "invalid_token" && PossessionError.invalidToken.endsCheck)
        #expect(PossessionError.rateLimited.code == "rate_limited" && !PossessionError.rateLimited.endsCheck)
        #expect(!PossessionError.stepOutOfOrder.endsCheck)
    }

    @Test("A wrong code carries the retries left; only some errors end the check")
    func wrongCode() {
        var problem = Problem(code: .wrongCode)
        problem.remainingAttempts = 2
        #expect(PossessionError(.server(problem)) == .wrongCode(retriesLeft: 2))
        #expect(!PossessionError.wrongCode(retriesLeft: 2).endsCheck)
        #expect(!PossessionError.resendLimitReached.endsCheck)
        #expect(PossessionError.retryLimitReached.endsCheck)
        #expect(PossessionError.expired.endsCheck)
        #expect(PossessionError(.network("down")) == .other(.network("down")))
    }

    @Test("The auth token names its flow")
    func correlationId() {
        #expect(StartedPossession.correlationId(inAuthToken: "vpt_pos_abc.secret") == "pos_abc")
        #expect(StartedPossession.correlationId(inAuthToken: "vpt_secret") == nil)
        #expect(StartedPossession.correlationId(inAuthToken: "vk_pos_abc.x") == nil)
    }
}

/// Screens that answer from a script and record the errors they were shown.
actor ScriptScreens: PossessionUI {
    var codeActions: [PossessionCodeAction]
    var linkActions: [PossessionLinkAction]
    private(set) var errors: [PossessionError?] = []

    init(codes: [PossessionCodeAction] = [], links: [PossessionLinkAction] = []) {
        codeActions = codes
        linkActions = links
    }

    func phoneNumber(error: PossessionError?) async -> String? { nil }

    func codeAction(state: PossessionState, error: PossessionError?) async -> PossessionCodeAction {
        errors.append(error)
        return codeActions.isEmpty ? .cancel : codeActions.removeFirst()
    }

    func linkAction(state: PossessionState, error: PossessionError?) async -> PossessionLinkAction {
        errors.append(error)
        return linkActions.isEmpty ? .cancel : linkActions.removeFirst()
    }
}

@Suite("Possession runner requests")
struct PossessionRunnerTests {
    static let token = "vpt_pos_abc.secret"

    static func state(_ flow: PossessionFlowType, _ status: PossessionStatus) throws -> TransportResponse {
        try Fixture.json(
            PossessionState(
                correlationId: "pos_abc", flow: flow, status: status, maskedPhoneNumber: "+1•••••••0100",
                phoneNumberNeeded: false, resendsLeft: 3, retriesLeft: 3, numberChangesLeft: 3, codeExpiresAt: nil,
                expiresAt: Fixture.now.addingTimeInterval(900)))
    }

    static func runner(_ transport: RecordingTransport) throws -> VerityPossession {
        VerityPossession(configuration: VerityConfiguration(baseURL: try Fixture.baseURL()), transport: transport)
    }

    @Test("A link wait asks the transport for longer than the server may hold it")
    func waitTimeout() async throws {
        let transport = RecordingTransport()
        await transport.enqueue(try Self.state(.desktop, .linkSent))
        await transport.enqueue(try Self.state(.desktop, .succeeded))
        let outcome = try await Self.runner(transport).authenticate(
            authToken: Self.token, ui: ScriptScreens(links: [.wait(seconds: 30)]))
        #expect(outcome.status == .succeeded)
        let requests = await transport.requests
        #expect(requests.count == 2 && requests[0].timeout == nil)
        #expect(requests[1].url.query == "wait=30")
        #expect(requests[1].timeout == 45)
        #expect((requests[1].timeout ?? 0) > 30)
    }

    @Test("A refused step on a flow that succeeded meanwhile is the success; otherwise it is step_out_of_order")
    func stepOutOfOrder() async throws {
        let transport = RecordingTransport()
        await transport.enqueue(try Self.state(.desktop, .linkSent))
        await transport.enqueue(try Fixture.problem(.stepOutOfOrder))
        await transport.enqueue(try Self.state(.desktop, .succeeded))
        let outcome = try await Self.runner(transport).authenticate(
            authToken: Self.token, ui: ScriptScreens(links: [.resend]))
        #expect(outcome.status == .succeeded)

        let other = RecordingTransport()
        await other.enqueue(try Self.state(.mobile, .otpSent))
        await other.enqueue(try Fixture.problem(.stepOutOfOrder))
        await other.enqueue(try Self.state(.mobile, .otpSent))
        await other.enqueue(try Fixture.problem(.rateLimited))
        let screens = ScriptScreens(codes: [.resend, .resend, .cancel])
        await #expect(throws: PossessionError.cancelled) {
            try await Self.runner(other).authenticate(authToken: Self.token, ui: screens)
        }
        #expect(await screens.errors == [nil, .stepOutOfOrder, .rateLimited])
    }

    @Test("Resending by another channel asks otp/resend for it")
    func resendByCall() async throws {
        let transport = RecordingTransport()
        await transport.enqueue(try Self.state(.mobile, .otpSent))
        await transport.enqueue(try Self.state(.mobile, .otpSent))
        let screens = ScriptScreens(codes: [.resendBy(.voice), .cancel])
        await #expect(throws: PossessionError.cancelled) {
            try await Self.runner(transport).authenticate(authToken: Self.token, ui: screens)
        }
        let resend = try #require(await transport.requests.last)
        #expect(resend.url.path.hasSuffix("/otp/resend"))
        #expect(try decodeBody(PossessionResendRequest.self, of: resend) == PossessionResendRequest(channel: .voice))
    }

    @Test("A step refused for want of app verification is sent again with the proof the silent push brought")
    func appVerification() async throws {
        let transport = RecordingTransport()
        let configuration = VerityConfiguration(baseURL: try Fixture.baseURL())
        let appVerification = VerityAppVerification(
            configuration: configuration, projectId: "prj_0123456789", transport: transport)
        await appVerification.setPushToken("a1b2c3d4", platform: .apns)
        await transport.enqueue(try Self.state(.mobile, .created))
        await transport.enqueue(try Fixture.problem(.appVerificationRequired))
        await transport.enqueue(
            try Fixture.json(AppVerificationStarted(id: "apv_1_x", expiresAt: Fixture.now), status: 202))
        await transport.enqueue(try Self.state(.mobile, .otpSent))
        let possession = VerityPossession(
            configuration: configuration, transport: transport, appVerification: appVerification)
        let run = Task {
            try await possession.authenticate(authToken: Self.token, ui: ScriptScreens(codes: [.cancel]))
        }
        try await eventually { await transport.requests.count == 3 }
        #expect(
            appVerification.receiveNotification([
                "type": "verity.app_verification", "appVerificationId": "apv_1_x", "secret": "s3cret",
            ]))
        await #expect(throws: PossessionError.cancelled) { try await run.value }
        let requests = await transport.requests
        #expect(requests[1].value(forHeader: AuthHeaders.appVerification) == nil)
        #expect(requests[2].url == (try Fixture.url("/v1/auth/app-verification")))
        #expect(requests[3].url == (try Fixture.url("/v1/possession/pos_abc/otp/start")))
        #expect(requests[3].value(forHeader: AuthHeaders.appVerification) == "apv_1_x.s3cret")
    }

    @Test("A malformed token is an invalid token, not an expired check")
    func malformedToken() async throws {
        await #expect(throws: PossessionError.invalidToken) {
            try await Self.runner(RecordingTransport()).authenticate(authToken: "vpt_nope", ui: ScriptScreens())
        }
    }
}
