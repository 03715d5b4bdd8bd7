import Foundation
import Testing
import VerityCore
import VerityJWT
import VerityKit
import VerityTestSupport

@testable import VerityServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sign-in as an app sees it: VerityKit's `VeritySession` over URLSession against a live server on a real socket,
/// with the backend calling the admin API over HTTP.
@Suite("Sessions end to end")
struct SessionEndToEndTests {
    static func app(_ server: LiveServer, store: any SecureStore = InMemorySecureStore()) -> VeritySession {
        VeritySession(
            configuration: VerityConfiguration(baseURL: server.baseURL), projectId: server.projectId, store: store)
    }

    /// Signs `loginId` in with the code the server sent (the `count`-th message to it).
    static func signIn(_ app: VeritySession, _ loginId: String, server: LiveServer, count: Int = 1) async throws
        -> Session
    {
        _ = try await app.startOTP(loginId: loginId)
        return try await app.verifyOTP(loginId: loginId, code: try await server.code(to: loginId, count: count))
    }

    /// Presents a refresh token as a raw HTTP request, as a thief holding a copy would.
    static func rawRefresh(_ token: String, server: LiveServer) async throws -> (status: Int, code: String?) {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("v1/auth/refresh"))
        request.httpMethod = "POST"
        request.setValue(server.projectId, forHTTPHeaderField: AuthHeaders.project)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(RefreshRequest(refreshToken: token))
        let (data, response) = try await URLSession.shared.data(for: request)
        return (
            (response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONDecoder().decode(Problem.self, from: data).code
        )
    }

    @Test(
        "Sign up, sign in again, refresh, restore from the store, logout", arguments: TestEngine.available)
    func lifecycle(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let store = InMemorySecureStore()
            let app = Self.app(server, store: store)
            var changes = await app.sessionChanges().makeAsyncIterator()
            #expect(await changes.next() == .some(nil))

            let signedUp = try await Self.signIn(app, "+14155550100", server: server)
            #expect(signedUp.firstSeen)
            #expect(signedUp.user.loginIds == ["+14155550100"])
            #expect(signedUp.amr == ["otp", "sms"])
            #expect(await changes.next()??.sessionId == signedUp.sessionId)

            let again = try await Self.signIn(app, "+14155550100", server: server, count: 2)
            #expect(!again.firstSeen)
            #expect(again.user.id == signedUp.user.id)
            #expect(again.sessionId != signedUp.sessionId)

            let refreshed = try await app.refresh()
            #expect(refreshed.refreshToken != again.refreshToken)
            #expect(refreshed.sessionId == again.sessionId)
            #expect(try await app.me().user.id == signedUp.user.id)

            // A new instance (the app restarted) finds the session in the store and can use it.
            let restarted = Self.app(server, store: store)
            #expect(await restarted.session?.refreshToken == refreshed.refreshToken)
            #expect(try await restarted.me().sessionId == refreshed.sessionId)

            await restarted.logout()
            #expect(await restarted.session == nil)
            let dead = try await Self.rawRefresh(refreshed.refreshToken, server: server)
            #expect(dead.status == 401)
        }
    }

    @Test(
        "A backend validates session tokens with VerityJWT, fetching the JWKS over HTTP, also across a key rotation",
        arguments: TestEngine.available)
    func backendValidates(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            let session = try await Self.signIn(app, "+14155550120", server: server)
            let clock = server.clock
            let verifier = SessionVerifier(
                issuer: "\(ServerConfiguration().resolvedPublicURL)/v1/projects/\(server.projectId)",
                audience: server.projectId,
                keySource: URLSessionJWKSSource(
                    url: server.baseURL.appending(path: "v1/projects/\(server.projectId)/.well-known/jwks.json")),
                now: { clock.now() })
            let claims = try await verifier.verify(session.sessionJwt)
            #expect(claims.subject == session.user.id)
            #expect(claims.authenticationMethods == ["otp", "sms"])

            // After a rotation the refreshed token has a kid the verifier has not seen: it refetches the JWKS.
            _ = try await server.verity.signingKeys.rotate(projectId: server.projectId)
            server.clock.advance(by: SigningKeyService.activationDelay + 1)
            let refreshed = try await app.refresh()
            #expect(
                try CompactJWS(parsing: refreshed.sessionJwt).header.kid
                    != (try CompactJWS(parsing: session.sessionJwt).header.kid))
            #expect(try await verifier.verify(refreshed.sessionJwt).subject == session.user.id)
            #expect(try await verifier.verify(session.sessionJwt).subject == session.user.id)
        }
    }

    @Test(
        "A refresh token used twice revokes the session family; the app is signed out", arguments: TestEngine.available)
    func reuseRevokesFamily(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            let first = try await Self.signIn(app, "ann@example.com", server: server)
            _ = try await app.refresh()

            // A copy of the first refresh token comes back: the server revokes the session and records it.
            let stolen = try await Self.rawRefresh(first.refreshToken, server: server)
            #expect(stolen.status == 401)
            #expect(stolen.code == "refresh_token_reused")
            let events = try await server.backend.securityEvents(userId: first.user.id)
            #expect(events.map(\.type) == ["refresh_token_reused"])

            // The app's own, newer token died with the family: its next refresh signs it out.
            let error = await #expect(throws: VerityKitError.self) { try await app.refresh() }
            #expect(error?.serverErrorCode == .invalidRefreshToken)
            #expect(await app.session == nil)
        }
    }

    @Test("A role given by the backend shows in the session after a refresh", arguments: TestEngine.available)
    func roleAfterRefresh(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            let session = try await Self.signIn(app, "+14155550101", server: server)
            #expect(session.roles.isEmpty)
            try await server.backend.createRole("editor", permissions: ["posts:write", "posts:read"])
            _ = try await server.backend.assignRoles(["editor"], to: session.user.id)
            _ = try await server.backend.updateUser(
                session.user.id, UpdateUserRequest(customClaims: ["plan": .string("pro")]))

            let refreshed = try await app.refresh()
            #expect(refreshed.roles == ["editor"])
            #expect(refreshed.permissions == ["posts:read", "posts:write"])
            #expect(refreshed.hasPermission("posts:write"))
            #expect(refreshed.customClaims["plan"] == .string("pro"))
        }
    }

    @Test("Step-up with a code to the other login id: amr has it and acr is mfa", arguments: TestEngine.available)
    func stepUpByCode(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            let session = try await Self.signIn(app, "+14155550102", server: server)
            _ = try await server.backend.updateUser(
                session.user.id, UpdateUserRequest(loginIds: ["+14155550102", "bob@example.com"]))

            let started = try await app.stepUp(method: .otp)
            #expect(started.channel == .email)
            let steppedUp = try await app.completeStepUp(code: try await server.code(to: "bob@example.com"))
            #expect(steppedUp.isSteppedUp)
            #expect(steppedUp.amr == ["otp", "sms", "email"])
            #expect(steppedUp.refreshToken == session.refreshToken)
            #expect(try await app.refresh().isSteppedUp)
        }
    }

    @Test("Step-up by push: the user's phone approves, the session gets push in amr", arguments: TestEngine.available)
    func stepUpByPush(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            let session = try await Self.signIn(app, "+14155550103", server: server)
            let phone = try await Phone.enrolled(userId: session.user.id, on: server)

            let started = try await app.stepUp()
            #expect(started.method == .push)
            let challengeId = try #require(started.challengeId)
            let pending = await #expect(throws: VerityKitError.self) {
                try await app.completeStepUp(challengeId: challengeId)
            }
            #expect(pending?.serverErrorCode == .challengePending)

            _ = try await phone.approve(challengeId)
            let steppedUp = try await app.completeStepUp(challengeId: challengeId)
            #expect(steppedUp.amr == ["otp", "sms", "push"])
            #expect(steppedUp.isSteppedUp)
        }
    }

    @Test(
        "verifyPhoneNumber is reentrant; a test number signs in with its fixed code and gets no message",
        arguments: TestEngine.available)
    func phoneSignIn(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            let app = Self.app(server)
            // A real number: two concurrent calls and a later one share one verification and one message.
            async let first = app.verifyPhoneNumber("+14155550104")
            async let second = app.verifyPhoneNumber("+14155550104")
            let (a, b) = try await (first, second)
            let c = try await app.verifyPhoneNumber("+14155550104")
            #expect(a == b && b == c)
            let code = try await server.code(to: "+14155550104")
            #expect(try await server.messageCount(to: "+14155550104") == 1)
            let session = try await app.signIn(verificationID: a, code: code)
            #expect(session.firstSeen)

            // A test number: no message, the fixed code works, again and again.
            try await server.backend.addTestNumber("+16505551234", code: "123456")
            for round in 1...3 {
                let id = try await app.verifyPhoneNumber("+16505551234")
                let signedIn = try await app.signIn(verificationID: id, code: "123456")
                #expect(signedIn.firstSeen == (round == 1))
            }
            #expect(try await server.messageCount(to: "+16505551234") == 0)

            let wrong = await #expect(throws: VerityKitError.self) {
                try await app.signIn(verificationID: try await app.verifyPhoneNumber("+16505551234"), code: "000000")
            }
            #expect(wrong?.serverErrorCode == .wrongCode)
            #expect(wrong?.problem?.remainingAttempts == 4)
        }
    }
}

@Suite("App verification end to end")
struct AppVerificationEndToEndTests {
    @Test(
        "An app that proves itself with the silent push's secret is sent its sign-in code; without a proof it is not",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            _ = try await server.verity.admin.updateProject(id: server.projectId, name: nil) {
                $0.requiresAppVerification = true
            }
            let configuration = VerityConfiguration(baseURL: server.baseURL, appId: "com.example.app")
            let unverified = VeritySession(
                configuration: configuration, projectId: server.projectId, store: InMemorySecureStore())
            let refused = await #expect(throws: VerityKitError.self) {
                try await unverified.startOTP(loginId: "+14155550100")
            }
            #expect(refused?.serverErrorCode == .appVerificationRequired)
            #expect(try await server.messageCount(to: "+14155550100") == 0)

            let appVerification = VerityAppVerification(configuration: configuration, projectId: server.projectId)
            await appVerification.setPushToken("a1b2c3d4e5f6", platform: .apns)
            let app = VeritySession(
                configuration: configuration, projectId: server.projectId, store: InMemorySecureStore(),
                appVerification: appVerification)
            // APNs is out of reach here: the test hands the app the silent push the outbox queued, with the secret
            // the worker would add (the server tests check that the APNs and FCM stand-ins carry it).
            let device = Task {
                for _ in 0..<200 {
                    let queued = try await server.verity.outbox.messages().filter {
                        $0.message.channel == .appVerification
                    }
                    if let message = queued.first?.message {
                        let secret = server.verity.appVerifications.secret(
                            for: message.destination, projectId: server.projectId)
                        LeakWatch.secret(secret)
                        _ = appVerification.receiveNotification([
                            "type": AppVerificationPush.type, AppVerificationPush.idKey: message.destination,
                            AppVerificationPush.secretKey: secret,
                        ])
                        return
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let session = try await SessionEndToEndTests.signIn(app, "+14155550100", server: server)
            try await device.value
            #expect(session.user.loginIds == ["+14155550100"])
        }
    }
}
