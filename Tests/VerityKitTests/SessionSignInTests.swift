import Foundation
import Testing
import VerityCore
import VerityKit

@Suite("Signing in with one-time codes")
struct SessionSignInTests {
    @Test("startOTP sends the session claims the app chose, for the session the code opens")
    func startOTPWithSessionClaims() async throws {
        let harness = try SessionHarness()
        try await harness.enqueue(SessionFixture.otpStarted(channel: .email))
        let claims: [String: JSONValue] = ["tenant": .string("acme"), "plan": .integer(2)]
        _ = try await harness.verity.startOTP(loginId: SessionFixture.email, sessionClaims: claims)
        #expect(
            try decodeBody(OTPStartRequest.self, of: try await harness.request(0))
                == OTPStartRequest(loginId: SessionFixture.email, sessionClaims: claims))
    }

    @Test("startOTP and verifyOTP send the project header and the request bodies, and sign in")
    func signInWithOTP() async throws {
        let harness = try SessionHarness()
        let started = SessionFixture.otpStarted(channel: .email)
        try await harness.enqueue(started)
        let answer = try SessionFixture.auth()

        let response = try await harness.verity.startOTP(loginId: SessionFixture.email, channel: .email, locale: "de")
        try await harness.enqueue(answer)
        let session = try await harness.verity.verifyOTP(loginId: SessionFixture.email, code: SessionFixture.code)

        #expect(response == started)
        let start = try await harness.request(0)
        #expect(start.method == .post)
        #expect(start.url == (try Fixture.url("/v1/auth/otp/start")))
        #expect(start.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(start.value(forHeader: "Content-Type") == "application/json")
        #expect(start.value(forHeader: "Authorization") == nil)
        #expect(
            try decodeBody(OTPStartRequest.self, of: start)
                == OTPStartRequest(loginId: SessionFixture.email, channel: .email, locale: "de"))

        let verify = try await harness.request(1)
        #expect(verify.method == .post)
        #expect(verify.url == (try Fixture.url("/v1/auth/otp/verify")))
        #expect(verify.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(verify.value(forHeader: "Authorization") == nil)
        #expect(
            try decodeBody(OTPVerifyRequest.self, of: verify)
                == OTPVerifyRequest(loginId: SessionFixture.email, code: SessionFixture.code))

        #expect(session.sessionJwt == answer.sessionJwt)
        #expect(session.refreshToken == SessionFixture.refreshToken(1))
        #expect(session.user == SessionFixture.user)
        #expect(session.sessionExpiresAt == answer.sessionExpiresAt)
        #expect(session.refreshExpiresAt == answer.refreshExpiresAt)
        #expect(await harness.verity.session == session)
        #expect(harness.store.allItems[SessionHarness.storageKey] != nil)
    }

    @Test("signIn(verificationID:code:) names the sign-in by its verification id")
    func signInWithVerificationId() async throws {
        let harness = try SessionHarness()
        try await harness.enqueue(try SessionFixture.auth())

        let session = try await harness.verity.signIn(
            verificationID: SessionFixture.verificationId, code: SessionFixture.code)

        let verify = try await harness.request(0)
        #expect(
            try decodeBody(OTPVerifyRequest.self, of: verify)
                == OTPVerifyRequest(verificationId: SessionFixture.verificationId, code: SessionFixture.code))
        #expect(await harness.verity.session == session)
    }

    @Test("a wrong code is the server's wrong_code with the attempts left, and signs no one in")
    func wrongCode() async throws {
        let harness = try SessionHarness()
        await harness.enqueue(try SessionFixture.wrongCode(remainingAttempts: 2))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.verity.verifyOTP(loginId: SessionFixture.email, code: "000000")
        }

        #expect(error?.serverErrorCode == .wrongCode)
        #expect(error?.problem?.remainingAttempts == 2)
        #expect(await harness.verity.session == nil)
        #expect(harness.store.allItems.isEmpty)
    }

    @Test("an answer without a refresh token does not sign in")
    func signInNeedsRefreshToken() async throws {
        let harness = try SessionHarness()
        try await harness.enqueue(try SessionFixture.auth(includesRefreshToken: false))

        let error = await #expect(throws: VerityKitError.self) {
            try await harness.verity.verifyOTP(loginId: SessionFixture.email, code: SessionFixture.code)
        }

        #expect(error?.code == "mapping")
        #expect(await harness.verity.session == nil)
    }

    @Test("concurrent verifyPhoneNumber calls for one number share one request, which asks not to resend")
    func verifyPhoneNumberCoalesces() async throws {
        let harness = try SessionHarness()
        await harness.transport.hold()
        try await harness.enqueue(SessionFixture.otpStarted())

        let ids = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<5 {
                group.addTask { try await harness.verity.verifyPhoneNumber(SessionFixture.phoneNumber, locale: "en") }
            }
            try await eventually { await harness.transport.heldCount >= 1 }
            // Give the other calls time to reach the session, which must not send them.
            try await Task.sleep(for: .milliseconds(100))
            #expect(await harness.transport.heldCount == 1)
            await harness.transport.release()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }

        #expect(ids == Array(repeating: SessionFixture.verificationId, count: 5))
        let requests = await harness.requests
        #expect(requests.count == 1)
        let request = try await harness.request(0)
        #expect(request.url == (try Fixture.url("/v1/auth/otp/start")))
        #expect(request.value(forHeader: AuthHeaders.project) == SessionFixture.projectId)
        #expect(
            try decodeBody(OTPStartRequest.self, of: request)
                == OTPStartRequest(loginId: SessionFixture.phoneNumber, channel: .sms, locale: "en", resend: false))
        let json = try JSONSerialization.jsonObject(with: try #require(request.body)) as? [String: Any]
        #expect(json?["resend"] as? Bool == false)
    }

    @Test("calling verifyPhoneNumber again while the code is pending returns the same verification id")
    func verifyPhoneNumberAgain() async throws {
        let harness = try SessionHarness()
        try await harness.enqueue(SessionFixture.otpStarted(sent: true))
        try await harness.enqueue(SessionFixture.otpStarted(sent: false))

        let first = try await harness.verity.verifyPhoneNumber(SessionFixture.phoneNumber)
        let second = try await harness.verity.verifyPhoneNumber(SessionFixture.phoneNumber)

        #expect(first == SessionFixture.verificationId)
        #expect(second == first)
        for request in await harness.requests {
            #expect(try decodeBody(OTPStartRequest.self, of: request).resend == false)
        }
    }
}

@Suite("Session claims")
struct SessionClaimsTests {
    @Test("the session reads sid, roles, permissions, amr, acr, auth_time and custom claims from the token")
    func decodedClaims() async throws {
        let harness = try SessionHarness()
        let custom: [String: JSONValue] = [
            "plan": .string("pro"), "seats": .integer(3), "beta": .bool(true),
            "org": .object(["id": .string("org_1")]),
        ]

        let session = try await harness.signIn(try SessionFixture.auth(amr: ["otp", "sms"], custom: custom))

        #expect(session.sessionId == SessionFixture.sessionId)
        #expect(session.roles == ["editor"])
        #expect(session.permissions == SessionFixture.permissions)
        #expect(session.amr == ["otp", "sms"])
        #expect(session.acr == nil)
        #expect(!session.isSteppedUp)
        #expect(session.authTime == Fixture.now)
        #expect(session.customClaims == custom)
        #expect(session.claims["sub"] == .string(SessionFixture.user.id))
        #expect(session.claims["plan"] == .string("pro"))
        #expect(session.claims.count == custom.count + 11)
        #expect(session.hasRole("editor"))
        #expect(!session.hasRole("admin"))
        #expect(session.hasPermission("posts:write"))
        #expect(!session.hasPermission("posts:delete"))
    }

    @Test("acr mfa means stepped up")
    func steppedUp() throws {
        let session = try Session(
            sessionJwt: try SessionFixture.sessionJWT(amr: ["otp", "sms", "push"], acr: "mfa"), refreshToken: "vrt_x",
            user: SessionFixture.user, sessionExpiresAt: Fixture.now, refreshExpiresAt: Fixture.now)

        #expect(session.isSteppedUp)
        #expect(session.acr == "mfa")
        #expect(session.customClaims.isEmpty)
    }

    @Test(
        "a session token that is not a JWS with a JSON payload, a sid and well-typed claims is refused",
        arguments: [
            "not-a-token", "two.parts", "a.b.c.d", "header.!!!.signature",
            "eyJhbGciOiJFUzI1NiJ9.WzEsMiwzXQ.c2ln",  // payload [1,2,3]
            "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2ln",  // no sid
            "eyJhbGciOiJFUzI1NiJ9.eyJzaWQiOiJzZXNfMSIsInJvbGVzIjoiYWRtaW4ifQ.c2ln",  // roles a string
            "eyJhbGciOiJFUzI1NiJ9.eyJzaWQiOiJzZXNfMSIsImFjciI6M30.c2ln",  // acr a number
        ])
    func malformedToken(token: String) {
        let error = #expect(throws: VerityKitError.self) {
            try Session(
                sessionJwt: token, refreshToken: "vrt_x", user: SessionFixture.user, sessionExpiresAt: Fixture.now,
                refreshExpiresAt: Fixture.now)
        }
        #expect(error?.code == "mapping")
    }

    @Test("describing a session shows ids, not tokens")
    func descriptionHidesTokens() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()

        for text in [String(describing: session), String(reflecting: session), "\(session)"] {
            #expect(text.contains(SessionFixture.sessionId))
            #expect(!text.contains(session.sessionJwt))
            #expect(!text.contains(session.refreshToken))
        }
    }
}

@Suite("Keeping the session")
struct SessionPersistenceTests {
    @Test("a new instance over the same store restores the session and schedules its refresh")
    func restore() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()

        let restarted = try SessionHarness(store: harness.store)
        #expect(await restarted.verity.session == session)
        #expect(try await restarted.verity.validSessionJWT() == session.sessionJwt)
        try await eventually { await restarted.sleeper.pendingCount == 1 }
        #expect(await restarted.requests.isEmpty)

        let otherProject = try SessionHarness(store: harness.store, projectId: "prj_other")
        #expect(await otherProject.verity.session == nil)
    }

    @Test("the session is stored under a key naming the project, as JSON, and removed on sign-out")
    func storedItem() async throws {
        let harness = try SessionHarness()
        let session = try await harness.signIn()

        let data = try #require(harness.store.allItems[SessionHarness.storageKey])
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(json?["refreshToken"] as? String == session.refreshToken)
        #expect(harness.store.allItems.count == 1)

        await harness.enqueue(SessionFixture.noContent)
        await harness.verity.logout()
        #expect(harness.store.allItems.isEmpty)
    }

    @Test("a damaged stored session is removed and no one is signed in")
    func damagedItem() async throws {
        let store = InMemorySecureStore(items: [SessionHarness.storageKey: Data("{not json".utf8)])
        let harness = try SessionHarness(store: store)

        #expect(await harness.verity.session == nil)
        #expect(store.allItems.isEmpty)
    }

    @Test("sessionChanges gives every subscriber the current session, then each change")
    func sessionChanges() async throws {
        let harness = try SessionHarness()
        var first = await harness.verity.sessionChanges().makeAsyncIterator()
        var second = await harness.verity.sessionChanges().makeAsyncIterator()
        #expect(await first.next() == .some(nil))
        #expect(await second.next() == .some(nil))

        let signedIn = try await harness.signIn()
        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        let refreshed = try await harness.verity.refresh()
        await harness.enqueue(SessionFixture.noContent)
        await harness.verity.logout()

        for iterator in [first, second] {
            var iterator = iterator
            #expect(await iterator.next() == .some(signedIn))
            #expect(await iterator.next() == .some(refreshed))
            #expect(await iterator.next() == .some(nil))
        }
        var late = await harness.verity.sessionChanges().makeAsyncIterator()
        #expect(await late.next() == .some(nil))
    }

    @Test("log messages never contain tokens, codes or login ids")
    func logsHoldNoSecrets() async throws {
        let recorder = LogRecorder()
        let harness = try SessionHarness(logger: recorder.logger)
        try await harness.enqueue(SessionFixture.otpStarted())
        _ = try await harness.verity.verifyPhoneNumber(SessionFixture.phoneNumber)
        let signedIn = try await harness.signIn()
        try await harness.enqueue(try SessionFixture.auth(generation: 2))
        let refreshed = try await harness.verity.refresh()
        try await harness.enqueue(
            StepUpStartResponse(
                method: .otp, channel: .sms, maskedDestination: "+1******0123", expiresAt: Fixture.now))
        _ = try await harness.verity.stepUp(method: .otp)
        try await harness.enqueue(
            try SessionFixture.auth(
                generation: 3, includesRefreshToken: false, amr: ["otp", "email", "sms"], acr: "mfa"))
        let steppedUp = try await harness.verity.completeStepUp(code: "135790")
        await harness.enqueue(SessionFixture.noContent)
        await harness.verity.logout()

        let secrets = [
            signedIn.sessionJwt, signedIn.refreshToken, refreshed.sessionJwt, refreshed.refreshToken,
            steppedUp.sessionJwt, SessionFixture.code, "135790", SessionFixture.email, SessionFixture.phoneNumber,
        ]
        let messages = recorder.all
        #expect(messages.contains { $0.contains("/v1/auth/refresh") })
        #expect(messages.contains { $0.contains(SessionFixture.sessionId) })
        for secret in secrets {
            #expect(!messages.contains { $0.contains(secret) }, "a log message contains a secret")
        }
    }
}
