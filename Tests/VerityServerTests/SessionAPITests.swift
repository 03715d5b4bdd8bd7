import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore
import VerityJWT

@testable import VerityServer

/// App-facing requests: `X-Verity-Project` and, when signed in, the session token.
extension TestClientProtocol {
    func auth(
        _ method: HTTPRequest.Method, _ path: String, project: Project, json: String? = nil, session: String? = nil
    ) async throws -> TestResponse {
        var headers = HTTPFields()
        headers[try #require(HTTPField.Name(AuthHeaders.project))] = project.id
        if let session { headers[.authorization] = "Bearer \(session)" }
        return try await send(method, "/v1/auth/\(path)", key: nil, json: json, headers: headers)
    }

    /// Signs `loginId` in with the code the recording sender received.
    func signIn(_ loginId: String, node: TestNode, codeCount: Int = 1) async throws -> AuthResponse {
        let started = try await auth(.post, "otp/start", project: node.project, json: #"{"loginId":"\#(loginId)"}"#)
        #expect(started.status == .ok)
        let code = try await node.sender.code(to: loginId, count: codeCount)
        let verified = try await auth(
            .post, "otp/verify", project: node.project, json: #"{"loginId":"\#(loginId)","code":"\#(code)"}"#)
        #expect(verified.status == .ok)
        return try verified.decode(AuthResponse.self)
    }

    func refresh(_ token: String?, project: Project) async throws -> TestResponse {
        try await auth(.post, "refresh", project: project, json: #"{"refreshToken":"\#(token ?? "")"}"#)
    }
}

@Suite("Sign-in with one-time codes, sessions and refresh tokens")
struct SessionAPITests {
    /// Verifies a session token with nothing but swift-crypto and the served JWKS: no Verity code involved.
    static func independentlyVerified(
        _ token: String, client: some TestClientProtocol, project: Project, keySet: String? = nil
    ) async throws -> [String: Any] {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        func bytes(_ text: String) throws -> Data {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return try #require(Data(base64Encoded: base64))
        }
        let header = try #require(try JSONSerialization.jsonObject(with: bytes(parts[0])) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        let response = try await client.send(
            .get, keySet ?? "/v1/projects/\(project.id)/.well-known/jwks.json", key: nil)
        let set = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        let keys = try #require(set["keys"] as? [[String: Any]])
        let jwk = try #require(keys.first { $0["kid"] as? String == header["kid"] as? String })
        let x = try bytes(try #require(jwk["x"] as? String))
        let y = try bytes(try #require(jwk["y"] as? String))
        let key = try P256.Signing.PublicKey(x963Representation: Data([4]) + x + y)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: bytes(parts[2]))
        #expect(key.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        return try #require(try JSONSerialization.jsonObject(with: bytes(parts[1])) as? [String: Any])
    }

    @Test(
        "Sign up with an SMS code, sign in again, and the session token carries the registered claims",
        arguments: TestEngine.available)
    func signUpAndIn(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let started = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+1 415 555 0100","channel":"sms"}"#)
            #expect(started.status == .ok)
            let start = try started.decode(OTPStartResponse.self)
            #expect(start.channel == .sms && start.sent && start.maskedDestination != "+14155550100")
            #expect(start.verificationId.hasPrefix("ver_"))

            let code = try await node.sender.code(to: "+14155550100")
            let first = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"+14155550100","code":"\#(code)"}"#)
            #expect(first.status == .ok)
            let signUp = try first.decode(AuthResponse.self)
            #expect(signUp.firstSeen)
            #expect(signUp.user.loginIds == ["+14155550100"])
            #expect(signUp.user.lastSignInAt != nil)
            #expect(try #require(signUp.refreshToken).hasPrefix("vrt_"))
            #expect(signUp.sessionExpiresAt == node.clock.now().addingTimeInterval(600))
            #expect(signUp.refreshExpiresAt == node.clock.now().addingTimeInterval(30 * 86_400))

            let claims = try await Self.independentlyVerified(signUp.sessionJwt, client: client, project: node.project)
            #expect(claims["iss"] as? String == "http://127.0.0.1:8080/v1/projects/\(node.project.id)")
            #expect(claims["aud"] as? String == node.project.id)
            #expect(claims["sub"] as? String == signUp.user.id)
            #expect(claims["amr"] as? [String] == ["otp", "sms"])
            #expect((claims["sid"] as? String)?.hasPrefix("ses_") == true)
            #expect(claims["roles"] as? [String] == [])
            #expect(claims["acr"] == nil)
            let iat = try #require(claims["iat"] as? Int)
            #expect(claims["exp"] as? Int == iat + 600)

            // The code is spent; a second sign-in needs a new one and finds the same user.
            let again = try await client.signIn("+14155550100", node: node, codeCount: 2)
            #expect(!again.firstSeen)
            #expect(again.user.id == signUp.user.id)

            // The admin API sees the user the sign-in created.
            let user = try await client.send(.get, "/v1/users/\(signUp.user.id)", key: node.apiKey)
            #expect(try user.decode(User.self).lastSignInAt != nil)

            // `verificationId` works in place of the login id.
            let byId = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"ann@example.com"}"#)
            let id = try byId.decode(OTPStartResponse.self).verificationId
            let emailCode = try await node.sender.code(to: "ann@example.com")
            let emailSignIn = try await client.auth(
                .post, "otp/verify", project: node.project,
                json: #"{"verificationId":"\#(id)","code":"\#(emailCode)"}"#)
            #expect(emailSignIn.status == .ok)
            #expect(try emailSignIn.decode(AuthResponse.self).firstSeen)
        }
    }

    @Test("A wrong code is a 401 with the attempts left; the fifth kills the code", arguments: TestEngine.available)
    func wrongCodes(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.auth(.post, "otp/start", project: node.project, json: #"{"loginId":"+14155550101"}"#)
            let code = try await node.sender.code(to: "+14155550101")
            for remaining in (1...4).reversed() {
                let wrong = try await client.auth(
                    .post, "otp/verify", project: node.project,
                    json: #"{"loginId":"+14155550101","code":"\#(wrongCode(for: code))"}"#)
                #expect(wrong.status == .unauthorized)
                let problem = try wrong.problem()
                #expect(problem.code == "wrong_code")
                #expect(problem.remainingAttempts == remaining)
            }
            let last = try await client.auth(
                .post, "otp/verify", project: node.project,
                json: #"{"loginId":"+14155550101","code":"\#(wrongCode(for: code))"}"#)
            #expect(last.status == .tooManyRequests)
            #expect(try last.problem().code == "max_check_attempts_reached")
            let right = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"+14155550101","code":"\#(code)"}"#)
            #expect(right.status == .notFound)

            // An API verification's code never signs anyone in, and a sign-in code is not the API's.
            let api = try await client.startVerification("+14155550102", key: node.apiKey)
            #expect(api.status == .created)
            let apiCode = try await node.sender.code(to: "+14155550102")
            let crossed = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"+14155550102","code":"\#(apiCode)"}"#)
            #expect(crossed.status == .notFound)
            #expect(try await client.check(to: "+14155550102", code: apiCode, key: node.apiKey).status == .ok)
        }
    }

    @Test("Bad sign-in requests get 4xx problems, never a 5xx", arguments: TestEngine.available)
    func badRequests(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let noProject = try await client.send(
                .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"+14155550100"}"#)
            #expect(noProject.status == .unauthorized)
            let unknown = try await client.auth(
                .post, "otp/start",
                project: Project(id: "prj_nope", name: "x", settings: .init(), createdAt: Date()),
                json: #"{"loginId":"+14155550100"}"#)
            #expect(unknown.status == .notFound)
            #expect(try unknown.problem().code == "project_not_found")
            let cases: [(String, String, Int, String)] = [
                ("otp/start", #"{"loginId":"not a phone"}"#, 400, "invalid_login_id"),
                ("otp/start", #"{"loginId":"+14155550100","channel":"email"}"#, 400, "invalid_request"),
                ("otp/start", #"{"loginId":"a@b.example","locale":"!!"}"#, 400, "invalid_locale"),
                ("otp/start", #"{"login":"x"}"#, 400, "invalid_request"),
                ("otp/verify", #"{"loginId":"+14155550100","code":"12"}"#, 400, "invalid_code"),
                ("otp/verify", #"{"code":"123456"}"#, 400, "invalid_request"),
                ("otp/verify", #"{"verificationId":"ver_x","code":"123456"}"#, 404, "verification_not_found"),
                ("refresh", #"{"refreshToken":"nope"}"#, 401, "invalid_refresh_token"),
                ("refresh", #"{"refreshToken":"vrt_unknown"}"#, 401, "invalid_refresh_token"),
            ]
            for (path, body, status, code) in cases {
                let response = try await client.auth(.post, path, project: node.project, json: body)
                #expect(Int(response.status.code) == status, "\(path) \(body)")
                #expect(try response.problem().code == code, "\(path) \(body)")
            }
            for session in [nil, "x.y.z", "garbage"] {
                let me = try await client.auth(.get, "me", project: node.project, session: session)
                #expect(me.status == .unauthorized)
                #expect(try me.problem().code == "invalid_session")
            }
        }
    }

    @Test(
        "Refresh rotates the token; a used one presented again revokes the family and is a security event",
        arguments: TestEngine.available)
    func refreshRotation(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550103", node: node)
            node.clock.advance(by: 3600)
            let refreshed = try await client.refresh(signIn.refreshToken, project: node.project)
            #expect(refreshed.status == .ok)
            let next = try refreshed.decode(AuthResponse.self)
            #expect(next.refreshToken != signIn.refreshToken)
            #expect(!next.firstSeen)
            // Sliding: the refresh token lives 30 days from this refresh.
            #expect(next.refreshExpiresAt == node.clock.now().addingTimeInterval(30 * 86_400))
            #expect(try await client.auth(.get, "me", project: node.project, session: next.sessionJwt).status == .ok)

            // The first token again: theft. The whole family dies, the newest token too.
            let reused = try await client.refresh(signIn.refreshToken, project: node.project)
            #expect(reused.status == .unauthorized)
            #expect(try reused.problem().code == "refresh_token_reused")
            let newest = try await client.refresh(next.refreshToken, project: node.project)
            #expect(try newest.problem().code == "invalid_refresh_token")
            let me = try await client.auth(.get, "me", project: node.project, session: next.sessionJwt)
            #expect(try me.problem().code == "invalid_session")
            #expect(node.logs.text.contains("refresh_token_reused"))
            #expect(!node.logs.text.contains(try #require(signIn.refreshToken)))

            let events = try await client.send(
                .get, "/v1/security-events?userId=\(signIn.user.id)", key: node.apiKey)
            let page = try events.decode(Page<SecurityEvent>.self)
            #expect(page.items.map(\.type) == ["refresh_token_reused"])
            #expect(page.items.first?.userId == signIn.user.id)

            let metrics = try await client.send(.get, "/metrics", key: nil)
            let text = String(buffer: metrics.body)
            #expect(text.contains(#"verity_sessions_events_total{event="refresh_token_reused"} 1"#))
            #expect(text.contains(#"verity_sessions_events_total{event="sign_up"} 1"#))
            #expect(text.contains(#"verity_sessions_events_total{event="refresh"} 1"#))

            // A token past its 30 days is dead.
            let other = try await client.signIn("+14155550104", node: node)
            node.clock.advance(by: 30 * 86_400 + 1)
            let expired = try await client.refresh(other.refreshToken, project: node.project)
            #expect(try expired.problem().code == "invalid_refresh_token")
        }
    }

    @Test("Ended sessions are deleted a week later, with their refresh tokens", arguments: TestEngine.available)
    func purge(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let ended = try await client.signIn("+14155550112", node: node)
            _ = try await client.auth(
                .post, "logout", project: node.project, json: #"{"refreshToken":"\#(ended.refreshToken ?? "")"}"#)
            node.clock.advance(by: 8 * 86_400)
            let live = try await client.signIn("+14155550112", node: node, codeCount: 2)
            try await node.verity.sessions.purgeEnded()
            let remaining = try await node.verity.database.execute { sql in
                try await sql.raw("SELECT user_id FROM sessions").all().count
            }
            #expect(remaining == 1)
            #expect(try await client.refresh(live.refreshToken, project: node.project).status == .ok)
            #expect(try await client.refresh(ended.refreshToken, project: node.project).status == .unauthorized)
        }
    }

    @Test("Logout ends one session, logout-all every session; me reads the session", arguments: TestEngine.available)
    func logout(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let phone = try await client.signIn("+14155550105", node: node)
            let laptop = try await client.signIn("+14155550105", node: node, codeCount: 2)
            let tablet = try await client.signIn("+14155550105", node: node, codeCount: 3)

            let me = try await client.auth(.get, "me", project: node.project, session: phone.sessionJwt)
            let body = try me.decode(MeResponse.self)
            #expect(body.user.id == phone.user.id && body.amr == ["otp", "sms"] && body.acr == nil)

            let logout = try await client.auth(
                .post, "logout", project: node.project, json: #"{"refreshToken":"\#(phone.refreshToken ?? "")"}"#)
            #expect(logout.status == .noContent)
            #expect(try await client.refresh(phone.refreshToken, project: node.project).status == .unauthorized)
            #expect(
                try await client.auth(.get, "me", project: node.project, session: phone.sessionJwt).status
                    == .unauthorized)
            #expect(try await client.refresh(laptop.refreshToken, project: node.project).status == .ok)

            let all = try await client.auth(.post, "logout-all", project: node.project, session: tablet.sessionJwt)
            #expect(all.status == .noContent)
            #expect(try await client.refresh(tablet.refreshToken, project: node.project).status == .unauthorized)
            #expect(
                try await client.auth(.get, "me", project: node.project, session: tablet.sessionJwt).status
                    == .unauthorized)
        }
    }

    @Test("A disabled user cannot sign in or refresh", arguments: TestEngine.available)
    func disabledUser(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("dan@example.com", node: node)
            let disabled = try await client.send(.post, "/v1/users/\(signIn.user.id)/disable", key: node.apiKey)
            #expect(disabled.status == .ok)
            let refresh = try await client.refresh(signIn.refreshToken, project: node.project)
            #expect(refresh.status == .unauthorized)
            // Starting answers as for anyone (see DisabledUserTests); no code goes out.
            let start = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"dan@example.com"}"#)
            #expect(start.status == .ok)

            // Enabled again, the user signs in again.
            _ = try await client.send(.post, "/v1/users/\(signIn.user.id)/enable", key: node.apiKey)
            let again = try await client.signIn("dan@example.com", node: node, codeCount: 2)
            #expect(again.user.id == signIn.user.id)
        }
    }

    @Test(
        "Roles and permissions appear in the next refreshed session; custom claims are merged",
        arguments: TestEngine.available)
    func rolesInSessions(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550106", node: node)
            let role = try await client.send(
                .post, "/v1/roles", key: node.apiKey,
                json: #"{"name":"editor","description":"Edits","permissions":["posts:write","posts:read"]}"#)
            #expect(role.status == .created)
            _ = try await client.send(
                .post, "/v1/roles", key: node.apiKey, json: #"{"name":"viewer","permissions":["posts:read"]}"#)
            #expect(
                try await client.send(.post, "/v1/roles", key: node.apiKey, json: #"{"name":"viewer"}"#).problem().code
                    == "role_exists")
            #expect(
                try await client.send(.post, "/v1/roles", key: node.apiKey, json: #"{"name":"bad name"}"#).problem()
                    .code == "invalid_role")

            let assigned = try await client.send(
                .post, "/v1/users/\(signIn.user.id)/roles", key: node.apiKey, json: #"{"roles":["editor","viewer"]}"#)
            #expect(try assigned.decode(User.self).roles == ["editor", "viewer"])
            let unknownRole = try await client.send(
                .post, "/v1/users/\(signIn.user.id)/roles", key: node.apiKey, json: #"{"roles":["ghost"]}"#)
            #expect(try unknownRole.problem().code == "role_not_found")
            _ = try await client.send(
                .patch, "/v1/users/\(signIn.user.id)", key: node.apiKey,
                json: #"{"customClaims":{"plan":"pro","tier":2}}"#)

            let refreshed = try await client.refresh(signIn.refreshToken, project: node.project).decode(
                AuthResponse.self)
            let claims = try await Self.independentlyVerified(
                refreshed.sessionJwt, client: client, project: node.project)
            #expect(claims["roles"] as? [String] == ["editor", "viewer"])
            #expect(claims["permissions"] as? [String] == ["posts:read", "posts:write"])
            #expect(claims["plan"] as? String == "pro")
            #expect(claims["tier"] as? Int == 2)
            #expect(claims["sub"] as? String == signIn.user.id)

            // Removing a role and changing a role's permissions show in the next refresh too.
            _ = try await client.send(.delete, "/v1/users/\(signIn.user.id)/roles/viewer", key: node.apiKey)
            _ = try await client.send(
                .patch, "/v1/roles/editor", key: node.apiKey, json: #"{"permissions":["posts:publish"]}"#)
            let later = try await client.refresh(refreshed.refreshToken, project: node.project).decode(
                AuthResponse.self)
            let laterClaims = try await Self.independentlyVerified(
                later.sessionJwt, client: client, project: node.project)
            #expect(laterClaims["roles"] as? [String] == ["editor"])
            #expect(laterClaims["permissions"] as? [String] == ["posts:publish"])

            let roles = try await client.send(.get, "/v1/roles", key: node.apiKey).decode(Page<Role>.self)
            #expect(roles.items.map(\.name) == ["editor", "viewer"])
            #expect(try await client.send(.delete, "/v1/roles/editor", key: node.apiKey).status == .noContent)
            let user = try await client.send(.get, "/v1/users/\(signIn.user.id)", key: node.apiKey)
            #expect(try user.decode(User.self).roles == [])

            // The session lifetime is a project setting.
            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { $0.sessionLifetime = 120 }
            let short = try await client.refresh(later.refreshToken, project: node.project).decode(AuthResponse.self)
            #expect(short.sessionExpiresAt == node.clock.now().addingTimeInterval(120))
        }
    }

    @Test(
        "Step-up by a code to the other login id gives acr mfa; the refresh token stays",
        arguments: TestEngine.available)
    func stepUpByCode(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550107", node: node)
            let none = try await client.auth(.post, "stepup/start", project: node.project, session: signIn.sessionJwt)
            #expect(try none.problem().code == "no_second_factor")

            _ = try await client.send(
                .patch, "/v1/users/\(signIn.user.id)", key: node.apiKey,
                json: #"{"loginIds":["+14155550107","eve@example.com"]}"#)
            let started = try await client.auth(
                .post, "stepup/start", project: node.project, session: signIn.sessionJwt)
            #expect(started.status == .ok)
            let start = try started.decode(StepUpStartResponse.self)
            #expect(start.method == .otp && start.channel == .email)
            let code = try await node.sender.code(to: "eve@example.com")

            let wrong = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(wrongCode(for: code))"}"#,
                session: signIn.sessionJwt)
            #expect(try wrong.problem().code == "wrong_code")
            let verified = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(code)"}"#,
                session: signIn.sessionJwt)
            #expect(verified.status == .ok)
            let stepped = try verified.decode(AuthResponse.self)
            #expect(stepped.refreshToken == nil)
            let claims = try await Self.independentlyVerified(stepped.sessionJwt, client: client, project: node.project)
            #expect(claims["amr"] as? [String] == ["otp", "sms", "email"])
            #expect(claims["acr"] as? String == "mfa")

            // The session keeps its second factor through a refresh with the old refresh token.
            let refreshed = try await client.refresh(signIn.refreshToken, project: node.project).decode(
                AuthResponse.self)
            let after = try await Self.independentlyVerified(
                refreshed.sessionJwt, client: client, project: node.project)
            #expect(after["acr"] as? String == "mfa")
        }
    }

    @Test(
        "Step-up by push: the user's device approves the challenge bound to the session",
        arguments: TestEngine.available)
    func stepUpByPush(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550108", node: node)
            let device = try await TestDevice.enrolled(userId: signIn.user.id, node: node, client: client)
            let started = try await client.auth(
                .post, "stepup/start", project: node.project, session: signIn.sessionJwt)
            let start = try started.decode(StepUpStartResponse.self)
            #expect(start.method == .push)
            let challengeId = try #require(start.challengeId)

            let early = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"challengeId":"\#(challengeId)"}"#,
                session: signIn.sessionJwt)
            #expect(try early.problem().code == "challenge_pending")

            // Another session of the same user cannot use this session's challenge.
            let other = try await client.signIn("+14155550108", node: node, codeCount: 2)
            let foreign = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"challengeId":"\#(challengeId)"}"#,
                session: other.sessionJwt)
            #expect(try foreign.problem().code == "challenge_not_found")

            let pending = try #require(try await device.pending(client: client).first { $0.id == challengeId })
            #expect(try await device.answer(pending, .approved, client: client).status == .ok)
            let verified = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"challengeId":"\#(challengeId)"}"#,
                session: signIn.sessionJwt)
            #expect(verified.status == .ok)
            let claims = try await Self.independentlyVerified(
                try verified.decode(AuthResponse.self).sessionJwt, client: client, project: node.project)
            #expect(claims["amr"] as? [String] == ["otp", "sms", "push"])
            #expect(claims["acr"] as? String == "mfa")
        }
    }

    @Test(
        "Step-up by an authenticator app: a TOTP code gives amr totp and acr mfa; a wrong or reused code is refused",
        arguments: TestEngine.available)
    func stepUpByTOTP(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550112", node: node)
            let created = try await client.send(
                .post, "/v1/users/\(signIn.user.id)/factors/totp", key: node.apiKey, json: #"{"friendlyName":"A"}"#)
            let factor = try created.decode(CreatedTOTPFactor.self)
            let totp = try TOTP(secret: try #require(Base32.decode(factor.secret)))
            // An unverified factor does not count.
            let unverified = try await client.auth(
                .post, "stepup/start", project: node.project, json: #"{"method":"totp"}"#, session: signIn.sessionJwt)
            #expect(try unverified.problem().code == "no_second_factor")
            let first = totp.code(at: node.clock.now())
            #expect(
                try await client.send(
                    .post, "/v1/factors/\(factor.factor.id)/verify", key: node.apiKey, json: #"{"code":"\#(first)"}"#
                ).status == .ok)

            // With no push factor, the server picks the authenticator app.
            let started = try await client.auth(
                .post, "stepup/start", project: node.project, session: signIn.sessionJwt)
            #expect(try started.decode(StepUpStartResponse.self) == StepUpStartResponse(method: .totp))
            let reused = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(first)","method":"totp"}"#,
                session: signIn.sessionJwt)
            #expect(reused.status == .unauthorized)
            #expect(try reused.problem().code == "wrong_code")

            node.clock.advance(by: 30)
            let code = totp.code(at: node.clock.now())
            let verified = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(code)","method":"totp"}"#,
                session: signIn.sessionJwt)
            #expect(verified.status == .ok)
            let claims = try await Self.independentlyVerified(
                try verified.decode(AuthResponse.self).sessionJwt, client: client, project: node.project)
            #expect(claims["amr"] as? [String] == ["otp", "sms", "totp"])
            #expect(claims["acr"] as? String == "mfa")

            // A code without `method` is a sent step-up code, and there is none pending.
            let plain = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"\#(code)"}"#,
                session: signIn.sessionJwt)
            #expect(try plain.problem().code == "verification_not_found")
            let mixed = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"challengeId":"chl_x","method":"totp"}"#,
                session: signIn.sessionJwt)
            #expect(try mixed.problem().code == "invalid_request")
        }
    }

    @Test(
        "Sign-in is limited per login id, also when no code is pending; logout and step-up are limited per client",
        arguments: TestEngine.available)
    func perLoginIdLimit(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perLoginId = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await node.run { client in
            // Probing whether a code is pending costs from the login id's bucket too.
            for _ in 1...2 {
                let probe = try await client.auth(
                    .post, "otp/verify", project: node.project, json: #"{"loginId":"+14155550113","code":"123456"}"#)
                #expect(try probe.problem().code == "verification_not_found")
            }
            let limited = try await client.auth(
                .post, "otp/verify", project: node.project, json: #"{"loginId":"+14155550113","code":"123456"}"#)
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.problem().code == "rate_limited")
            let start = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550113"}"#)
            #expect(start.status == .tooManyRequests)
            // Another login id from the same client is not affected.
            let other = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550114"}"#)
            #expect(other.status == .ok)
        }

        let strict = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perClientAddress = RateLimitPolicy(capacity: 2, period: 3600)
        }
        try await strict.run { client in
            let signIn = try await client.signIn("+14155550115", node: strict)
            let logout = try await client.auth(.post, "logout", project: strict.project, session: signIn.sessionJwt)
            #expect(logout.status == .tooManyRequests)
            let stepUp = try await client.auth(
                .post, "stepup/verify", project: strict.project, json: #"{"code":"123456"}"#,
                session: signIn.sessionJwt)
            #expect(stepUp.status == .tooManyRequests)
        }
    }

    @Test("Logout with only the session token ends that session and no other", arguments: TestEngine.available)
    func logoutBySessionToken(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let phone = try await client.signIn("+14155550116", node: node)
            let laptop = try await client.signIn("+14155550116", node: node, codeCount: 2)
            let logout = try await client.auth(.post, "logout", project: node.project, session: phone.sessionJwt)
            #expect(logout.status == .noContent)
            #expect(
                try await client.auth(.get, "me", project: node.project, session: phone.sessionJwt).status
                    == .unauthorized)
            #expect(try await client.refresh(phone.refreshToken, project: node.project).status == .unauthorized)
            #expect(
                try await client.auth(.get, "me", project: node.project, session: laptop.sessionJwt).status == .ok)
            let neither = try await client.auth(.post, "logout", project: node.project)
            #expect(neither.status == .unauthorized)
        }
    }

    @Test(
        "Test numbers: nothing is sent, the fixed code works, no send cap, the client's limit, at most 10",
        arguments: TestEngine.available)
    func testNumbers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perClientAddress = RateLimitPolicy(capacity: 20, period: 3600)
        }
        try await node.run { client in
            let added = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+1 650 555 1234","code":"123456"}"#
            )
            #expect(added.status == .created)
            #expect(try added.decode(TestPhoneNumber.self).phoneNumber == "+16505551234")

            for attempt in 1...5 {
                let start = try await client.auth(
                    .post, "otp/start", project: node.project,
                    json: #"{"loginId":"+16505551234","resend":false}"#)
                #expect(start.status == .ok)
                #expect(try start.decode(OTPStartResponse.self).sent == false)
                let verified = try await client.auth(
                    .post, "otp/verify", project: node.project, json: #"{"loginId":"+16505551234","code":"123456"}"#)
                #expect(verified.status == .ok)
                #expect(try verified.decode(AuthResponse.self).firstSeen == (attempt == 1))
            }
            // Asking again and again (resend by default) never meets the cap of five sends.
            for _ in 1...7 {
                let again = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"+16505551234"}"#)
                #expect(again.status == .ok)
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+16505551234").isEmpty)

            // Test numbers take from the client's bucket like any login id (17 of 20 taken so far); an ordinary
            // number meets the same limit.
            for _ in 1...3 {
                _ = try await client.auth(
                    .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550109"}"#)
            }
            let limited = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550109"}"#)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)

            for index in 1...9 {
                let more = try await client.send(
                    .post, "/v1/test-numbers", key: node.apiKey,
                    json: #"{"phoneNumber":"+1650555100\#(index)","code":"000000"}"#)
                #expect(more.status == .created)
            }
            let eleventh = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505559999","code":"000000"}"#)
            #expect(try eleventh.problem().code == "test_number_limit_reached")
            // Changing the code of an existing one is not an eleventh.
            let changed = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"654321"}"#)
            #expect(changed.status == .created)
            let list = try await client.send(.get, "/v1/test-numbers", key: node.apiKey)
            #expect(try list.decode(Page<TestPhoneNumber>.self).items.count == 10)
            #expect(
                try await client.send(.delete, "/v1/test-numbers/%2B16505551234", key: node.apiKey).status
                    == .noContent)
            #expect(
                try await client.send(.delete, "/v1/test-numbers/%2B16505551234", key: node.apiKey).status
                    == .notFound)
        }
    }

    @Test("A step-up code to a test number is never sent, and the fixed code works", arguments: TestEngine.available)
    func testNumberStepUp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            _ = try await client.send(
                .post, "/v1/test-numbers", key: node.apiKey, json: #"{"phoneNumber":"+16505551234","code":"123456"}"#)
            let byEmail = try await client.signIn("tess@example.com", node: node)
            _ = try await client.send(
                .patch, "/v1/users/\(byEmail.user.id)", key: node.apiKey,
                json: #"{"loginIds":["tess@example.com","+16505551234"]}"#)
            for _ in 1...7 {
                let stepUp = try await client.auth(
                    .post, "stepup/start", project: node.project, session: byEmail.sessionJwt)
                #expect(try stepUp.decode(StepUpStartResponse.self).channel == .sms)
            }
            let steppedUp = try await client.auth(
                .post, "stepup/verify", project: node.project, json: #"{"code":"123456"}"#,
                session: byEmail.sessionJwt)
            #expect(steppedUp.status == .ok)
            let claims = try await Self.independentlyVerified(
                try steppedUp.decode(AuthResponse.self).sessionJwt, client: client, project: node.project)
            #expect(claims["amr"] as? [String] == ["otp", "email", "sms"])
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+16505551234").isEmpty)
        }
    }

    @Test(
        "Starting with resend false while a code is pending sends nothing and returns the same verification",
        arguments: TestEngine.available)
    func reentrantStart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let json = #"{"loginId":"+14155550110","resend":false}"#
            let first = try await client.auth(.post, "otp/start", project: node.project, json: json)
                .decode(OTPStartResponse.self)
            #expect(first.sent)
            let second = try await client.auth(.post, "otp/start", project: node.project, json: json)
                .decode(OTPStartResponse.self)
            #expect(!second.sent)
            #expect(second.verificationId == first.verificationId)
            _ = try await node.sender.waitForMessages(to: "+14155550110")
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: "+14155550110").count == 1)

            // The default re-sends the same code.
            let third = try await client.auth(
                .post, "otp/start", project: node.project, json: #"{"loginId":"+14155550110"}"#
            )
            .decode(OTPStartResponse.self)
            #expect(third.sent && third.verificationId == first.verificationId)
            _ = try await node.sender.waitForMessages(to: "+14155550110", count: 2)
        }
    }

    @Test("Session tokens verify with VerityJWT against the served JWKS", arguments: TestEngine.available)
    func verityJWT(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550111", node: node)
            let claims = try await SigningKeyTests.verifier(node, client: client).verify(signIn.sessionJwt)
            #expect(claims.subject == signIn.user.id)
            #expect(claims.authenticationMethods == ["otp", "sms"])
            #expect(claims.customClaims["sid"] == nil)
            let long = try await client.send(.get, "/v1/projects/\(node.project.id)/.well-known/jwks.json", key: nil)
            let short = try await client.send(.get, "/v1/projects/\(node.project.id)/jwks.json", key: nil)
            #expect(short.status == .ok && short.body == long.body)
        }
    }
}
