import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Refreshing the session")
struct SessionRefreshTests {
    @Test("refresh presents the refresh token and keeps the new one")
    func refresh() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        try await harness.enqueue(try SessionFixture.auth(generation: 2))

        let refreshed = try await harness.verity.refresh()

        let request = try await harness.request(1)
        #expect(request.method == .post)
        #expect(request.url == (try Fixture.url("/v1/auth/refresh")))
        #expect(request.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(request.value(forHeader: "Authorization") == nil)
        #expect(
            try decodeBody(RefreshRequest.self, of: request)
                == RefreshRequest(refreshToken: SessionFixture.refreshToken(1)))
        #expect(refreshed.refreshToken == SessionFixture.refreshToken(2))
        #expect(refreshed.sessionJwt == (try SessionFixture.sessionJWT(generation: 2)))
        #expect(await harness.verity.session == refreshed)
        #expect(try await SessionHarness(store: harness.store).verity.session == refreshed)
    }

    @Test("concurrent refreshes share one request, so the refresh token is never presented twice")
    func singleFlight() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        // Within the refresh margin, so that validSessionJWT needs a refresh too.
        harness.clock.advance(by: SessionFixture.lifetime - 10)
        await harness.transport.hold()
        try await harness.enqueue(try SessionFixture.auth(generation: 2, issuedAt: harness.clock.now))

        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<6 {
                group.addTask {
                    index.isMultiple(of: 2)
                        ? try await harness.verity.refresh().sessionJwt : try await harness.verity.validSessionJWT()
                }
            }
            try await eventually { await harness.transport.heldCount >= 1 }
            // Give the other callers time to reach the session, which must not send them.
            try await Task.sleep(for: .milliseconds(100))
            #expect(await harness.transport.heldCount == 1)
            await harness.transport.release()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }

        let refreshed = try SessionFixture.sessionJWT(generation: 2, issuedAt: harness.clock.now)
        #expect(tokens == Array(repeating: refreshed, count: 6))
        let requests = await harness.requests
        #expect(requests.count == 2)
        #expect(requests.last?.url == (try Fixture.url("/v1/auth/refresh")))
        #expect(await harness.verity.session?.refreshToken == SessionFixture.refreshToken(2))
    }

    @Test(
        "a refused refresh token or a disabled user ends the session",
        arguments: [ErrorCode.refreshTokenReused, .invalidRefreshToken, .userDisabled])
    func refusalEndsSession(code: ErrorCode) async throws {
        let harness = try SessionHarness()
        var changes = await harness.verity.sessionChanges().makeAsyncIterator()
        #expect(await changes.next() == .some(nil))
        let session = try await harness.signIn()
        #expect(await changes.next() == .some(session))
        await harness.enqueue(try Fixture.problem(code))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.verity.refresh()
        }

        #expect(error?.serverErrorCode == code)
        #expect(await harness.verity.session == nil)
        #expect(harness.store.allItems.isEmpty)
        #expect(await changes.next() == .some(nil))
        try await eventually { await harness.sleeper.pendingCount == 0 }
        await #expect(throws: VerityKitError.notSignedIn) {
            try await harness.verity.validSessionJWT()
        }
    }

    @Test("a refresh that fails for want of a connection or a server error keeps the session")
    func failureKeepsSession() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        await harness.enqueue(failure: URLError(.notConnectedToInternet))
        await harness.enqueue(try Fixture.problem(.serviceUnavailable))

        let network = await #expect(throws: VerityKitError.self) { try await harness.verity.refresh() }
        let server = await #expect(throws: VerityKitError.self) { try await harness.verity.refresh() }

        #expect(network?.code == "network")
        #expect(server?.serverErrorCode == .serviceUnavailable)
        #expect(await harness.verity.session == session)
        #expect(harness.store.allItems[SessionHarness.storageKey] != nil)
    }

    @Test("without a session, refresh and validSessionJWT throw notSignedIn and send nothing")
    func notSignedIn() async throws {
        let harness = try SessionHarness()

        await #expect(throws: VerityKitError.notSignedIn) { try await harness.verity.refresh() }
        await #expect(throws: VerityKitError.notSignedIn) { try await harness.verity.validSessionJWT() }
        await #expect(throws: VerityKitError.notSignedIn) { try await harness.verity.me() }
        #expect(await harness.requests.isEmpty)
        #expect(VerityKitError.notSignedIn.code == "authentication_token")
    }

    @Test("validSessionJWT refreshes first once the token expires within the refresh margin")
    func validSessionJWT() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()

        harness.clock.advance(by: SessionFixture.lifetime - VeritySession.refreshMargin - 1)
        #expect(try await harness.verity.validSessionJWT() == session.sessionJwt)
        #expect(await harness.requests.count == 1)

        harness.clock.advance(by: 2)
        try await harness.enqueue(try SessionFixture.auth(generation: 2, issuedAt: harness.clock.now))
        #expect(try await harness.verity.validSessionJWT() != session.sessionJwt)
        #expect(await harness.requests.count == 2)
        #expect(await harness.verity.session?.refreshToken == SessionFixture.refreshToken(2))
    }
}

extension SessionRefreshTests {
    @Test("a one-minute token is refreshed a quarter of its lifetime before it expires, not at once and not in a loop")
    func shortLivedToken() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn(try SessionFixture.auth(lifetime: 60))
        try await eventually { await harness.sleeper.pendingCount == 1 }
        #expect(await harness.sleeper.requested == [.seconds(45)])

        harness.clock.advance(by: 44)
        #expect(try await harness.verity.validSessionJWT() == session.sessionJwt)
        #expect(await harness.requests.count == 1)
        harness.clock.advance(by: 2)
        try await harness.enqueue(try SessionFixture.auth(generation: 2, issuedAt: harness.clock.now, lifetime: 60))
        #expect(try await harness.verity.validSessionJWT() != session.sessionJwt)
        #expect(await harness.requests.count == 2)
    }

    @Test("a device clock ten minutes fast does not make a fresh token look expired")
    func fastDeviceClock() async throws {
        let harness = try SessionHarness()
        // The server issued the token ten minutes before the device's clock says it is.
        let session = try await harness.signIn(
            try SessionFixture.auth(issuedAt: harness.clock.now.addingTimeInterval(-600), lifetime: 300))
        try await eventually { await harness.sleeper.pendingCount == 1 }
        #expect(await harness.sleeper.requested == [.seconds(240)])
        #expect(try await harness.verity.validSessionJWT() == session.sessionJwt)
        #expect(try await harness.verity.validSessionJWT() == session.sessionJwt)
        #expect(await harness.requests.count == 1)
    }
}

@Suite("Using the session")
struct WithSessionTests {
    @Test("me sends the session token and the project header")
    func me() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        let me = MeResponse(
            user: SessionFixture.user, permissions: SessionFixture.permissions, sessionId: SessionFixture.sessionId,
            amr: ["otp", "email"], acr: nil)
        try await harness.enqueue(me)

        #expect(try await harness.verity.me() == me)

        let request = try await harness.request(1)
        #expect(request.method == .get)
        #expect(request.url == (try Fixture.url("/v1/auth/me")))
        #expect(bearerToken(of: request) == session.sessionJwt)
        #expect(request.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(request.body == nil)
    }

    @Test("a refused session token is refreshed once and the call retried once with the new one")
    func retriesOnceAfterRefresh() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        var renamed = SessionFixture.user
        renamed.displayName = "Ada L."
        let me = MeResponse(
            user: renamed, permissions: [], sessionId: SessionFixture.sessionId, amr: ["otp", "email"], acr: nil)
        await harness.enqueue(try Fixture.problem(.invalidSession))
        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        try await harness.enqueue(me)

        #expect(try await harness.verity.me() == me)

        let paths = await harness.requests.map(\.url.path)
        #expect(paths == ["/v1/auth/otp/verify", "/v1/auth/me", "/v1/auth/refresh", "/v1/auth/me"])
        #expect(bearerToken(of: try await harness.request(1)) == session.sessionJwt)
        #expect(bearerToken(of: try await harness.request(3)) == (try SessionFixture.sessionJWT(generation: 2)))
        #expect(await harness.verity.session?.user == renamed)
    }

    @Test("a second refusal is thrown, not retried again")
    func retriesOnlyOnce() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        var calls: [String] = []

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.verity.withSession { sessionJwt in
                calls.append(sessionJwt)
                throw VerityKitError.server(Problem(code: .invalidSession))
            }
        }

        #expect(error?.serverErrorCode == .invalidSession)
        #expect(calls == [try SessionFixture.sessionJWT(generation: 1), try SessionFixture.sessionJWT(generation: 2)])
        #expect(await harness.requests.count == 2)
    }

    @Test("errors other than a refused session token are thrown without a refresh")
    func otherErrorsAreNotRetried() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        var calls = 0

        for thrown in [
            VerityKitError.server(Problem(code: .wrongCode)), .server(Problem(code: .forbidden)), .network("x"),
        ] {
            await #expect(throws: thrown) {
                try await harness.verity.withSession { _ in
                    calls += 1
                    throw thrown
                }
            }
        }

        #expect(calls == 3)
        #expect(await harness.requests.count == 1)
    }
}

@Suite("Refreshing automatically")
struct AutomaticRefreshTests {
    @Test("the session is refreshed a margin before it expires, again after a network failure, and ended on refusal")
    func automaticRefresh() async throws {
        let harness = try SessionHarness()
        let dueAfter = Duration.seconds(SessionFixture.lifetime - VeritySession.refreshMargin)
        try await harness.signIn()
        try await eventually { await harness.sleeper.pendingCount == 1 }
        #expect(await harness.sleeper.requested == [dueAfter])

        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        await harness.sleeper.wakeAll()
        try await eventually { await harness.verity.session?.refreshToken == SessionFixture.refreshToken(2) }
        let refresh = try await harness.request(1)
        #expect(try decodeBody(RefreshRequest.self, of: refresh).refreshToken == SessionFixture.refreshToken(1))
        try await eventually { await harness.sleeper.pendingCount == 1 }
        #expect(await harness.sleeper.requested == [dueAfter, dueAfter])

        await harness.enqueue(failure: URLError(.timedOut))
        await harness.sleeper.wakeAll()
        try await eventually { await harness.sleeper.requested.count == 3 }
        #expect(await harness.sleeper.requested.last == .seconds(VeritySession.refreshRetryInterval))
        #expect(await harness.verity.session?.refreshToken == SessionFixture.refreshToken(2))

        await harness.enqueue(try Fixture.problem(.refreshTokenReused))
        await harness.sleeper.wakeAll()
        try await eventually { await harness.verity.session == nil }
        #expect(await harness.requests.count == 4)
        #expect(await harness.sleeper.requested.count == 3)
        #expect(await harness.sleeper.pendingCount == 0)
    }

    @Test("signing out cancels the scheduled refresh")
    func logoutCancels() async throws {
        let harness = try SessionHarness()
        try await harness.signIn()
        try await eventually { await harness.sleeper.pendingCount == 1 }
        await harness.enqueue(SessionFixture.noContent)

        await harness.verity.logout()

        try await eventually { await harness.sleeper.cancelledCount == 1 }
        #expect(await harness.sleeper.pendingCount == 0)
    }
}

@Suite("Signing out")
struct LogoutTests {
    @Test(
        "logout revokes the refresh token on the server and clears the session, even when the server is unreachable",
        arguments: [true, false])
    func logout(serverReachable: Bool) async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        if serverReachable {
            await harness.enqueue(SessionFixture.noContent)
        } else {
            await harness.enqueue(failure: URLError(.notConnectedToInternet))
        }

        await harness.verity.logout()

        let request = try await harness.request(1)
        #expect(request.method == .post)
        #expect(request.url == (try Fixture.url("/v1/auth/logout")))
        #expect(request.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(try decodeBody(RefreshRequest.self, of: request) == RefreshRequest(refreshToken: session.refreshToken))
        #expect(await harness.verity.session == nil)
        #expect(harness.store.allItems.isEmpty)
        #expect(try await SessionHarness(store: harness.store).verity.session == nil)
    }

    @Test("logout without a session sends nothing")
    func logoutSignedOut() async throws {
        let harness = try SessionHarness()
        await harness.verity.logout()
        #expect(await harness.requests.isEmpty)
    }

    @Test("logoutAll sends the session token and then clears the session")
    func logoutAll() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        await harness.enqueue(SessionFixture.noContent)

        try await harness.verity.logoutAll()

        let request = try await harness.request(1)
        #expect(request.method == .post)
        #expect(request.url == (try Fixture.url("/v1/auth/logout-all")))
        #expect(bearerToken(of: request) == session.sessionJwt)
        #expect(request.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(await harness.verity.session == nil)
    }

    @Test("logoutAll keeps the session when the server cannot be told")
    func logoutAllFailure() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        await harness.enqueue(failure: URLError(.notConnectedToInternet))

        await #expect(throws: VerityKitError.self) { try await harness.verity.logoutAll() }

        #expect(await harness.verity.session == session)
    }
}

@Suite("Stepping up")
struct StepUpTests {
    @Test("a code step-up sends the session token and keeps the refresh token")
    func codeStepUp() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        let started = StepUpStartResponse(
            method: .otp, channel: .sms, maskedDestination: "+1******0123",
            expiresAt: Fixture.now.addingTimeInterval(600))
        try await harness.enqueue(started)
        try await harness.enqueue(
            try SessionFixture.auth(
                generation: 2, includesRefreshToken: false, amr: ["otp", "email", "sms"], acr: "mfa"))

        #expect(try await harness.verity.stepUp(method: .otp, locale: "fr") == started)
        let steppedUp = try await harness.verity.completeStepUp(code: "135790")

        let start = try await harness.request(1)
        #expect(start.url == (try Fixture.url("/v1/auth/stepup/start")))
        #expect(bearerToken(of: start) == session.sessionJwt)
        #expect(start.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(try decodeBody(StepUpStartRequest.self, of: start) == StepUpStartRequest(method: .otp, locale: "fr"))
        let verify = try await harness.request(2)
        #expect(verify.url == (try Fixture.url("/v1/auth/stepup/verify")))
        #expect(bearerToken(of: verify) == session.sessionJwt)
        #expect(try decodeBody(StepUpVerifyRequest.self, of: verify) == StepUpVerifyRequest(code: "135790"))

        #expect(steppedUp.isSteppedUp)
        #expect(steppedUp.amr == ["otp", "email", "sms"])
        #expect(steppedUp.sessionId == session.sessionId)
        #expect(steppedUp.refreshToken == session.refreshToken)
        #expect(steppedUp.sessionJwt != session.sessionJwt)
        #expect(await harness.verity.session == steppedUp)
        #expect(try await SessionHarness(store: harness.store).verity.session == steppedUp)
    }

    @Test("a push step-up waits for the approval and keeps the refresh token")
    func pushStepUp() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        await harness.enqueue(try Fixture.problem(.challengePending))
        try await harness.enqueue(
            try SessionFixture.auth(
                generation: 2, includesRefreshToken: false, amr: ["otp", "email", "push"], acr: "mfa"))

        let pending = await #expect(throws: VerityKitError.self) {
            try await harness.verity.completeStepUp(challengeId: Fixture.challengeId)
        }
        #expect(pending?.serverErrorCode == .challengePending)
        #expect(await harness.verity.session == session)
        let steppedUp = try await harness.verity.completeStepUp(challengeId: Fixture.challengeId)

        let verify = try await harness.request(2)
        #expect(
            try decodeBody(StepUpVerifyRequest.self, of: verify)
                == StepUpVerifyRequest(challengeId: Fixture.challengeId))
        #expect(steppedUp.isSteppedUp)
        #expect(steppedUp.refreshToken == session.refreshToken)
    }

    @Test("a TOTP step-up sends the authenticator code with method totp")
    func totpStepUp() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        try await harness.enqueue(StepUpStartResponse(method: .totp))
        try await harness.enqueue(
            try SessionFixture.auth(
                generation: 2, includesRefreshToken: false, amr: ["otp", "email", "totp"], acr: "mfa"))

        #expect(try await harness.verity.stepUp().method == .totp)
        let steppedUp = try await harness.verity.completeStepUp(totpCode: "287082")

        #expect(
            try decodeBody(StepUpVerifyRequest.self, of: try await harness.request(2))
                == StepUpVerifyRequest(code: "287082", method: .totp))
        #expect(steppedUp.amr.contains("totp") && steppedUp.isSteppedUp)
        #expect(steppedUp.refreshToken == session.refreshToken)
    }

    @Test("a wrong step-up code is thrown without refreshing, and the session stays as it was")
    func wrongStepUpCode() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()
        await harness.enqueue(try SessionFixture.wrongCode(remainingAttempts: 4))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.verity.completeStepUp(code: "000000")
        }

        #expect(error?.serverErrorCode == .wrongCode)
        #expect(error?.problem?.remainingAttempts == 4)
        #expect(await harness.requests.count == 2)
        #expect(await harness.verity.session == session)
    }
}
