import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

/// Requests as Descope's SDKs send them, under the face's default prefix.
extension TestClientProtocol {
    func descope(
        _ path: String, method: HTTPRequest.Method = .post, bearer: String?, json: String? = "{}",
        cookie: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let bearer { headers[.authorization] = "Bearer \(bearer)" }
        if let cookie { headers[.cookie] = cookie }
        return try await execute(
            uri: "/descope\(path)", method: method, headers: headers,
            body: method == .get ? nil : json.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    /// The `errorCode` of Descope's error body, after checking the body's shape.
    func descopeError() throws -> String {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        #expect(root["errorDescription"] is String)
        #expect(root["errorMessage"] is String)
        return try #require(root["errorCode"] as? String)
    }
}

@Suite("The Descope auth face")
struct DescopeFaceTests {
    static let email = "ada@example.com"
    static let phone = "+14155550123"

    /// Starts and verifies a sign-up-or-in code, as python-sdk's `otp.sign_up_or_in` and `otp.verify_code` do, with
    /// `loginOptions` (JSON) on the start; `count` is how many codes the login id has been sent, this one included.
    static func signIn(
        _ loginId: String, method: String, loginOptions: String = "{}", node: TestNode,
        client: some TestClientProtocol, count: Int = 1
    ) async throws -> [String: Any] {
        let verified = try await verifyCode(
            loginId, method: method, loginOptions: loginOptions, node: node, client: client, count: count)
        #expect(verified.status == .ok)
        return try verified.json()
    }

    /// Starts a code at `/v1/auth/otp/{start}/{method}` and verifies the code it sends, returning the verify answer
    /// unchecked (its cookies, its body). `project` is what the bearer names (the project id or its Descope alias);
    /// `session`, a refresh JWT sent with the start, as for a step-up or MFA; `proof`, a refresh JWT sent with the
    /// verify too (what completes a step-up). `count` is how many codes the login id has been sent, this one included.
    static func verifyCode(
        _ loginId: String, method: String, start path: String = "signup-in", project: String? = nil,
        session: String? = nil, proof: String? = nil, loginOptions: String = "{}", node: TestNode,
        client: some TestClientProtocol, count: Int = 1
    ) async throws -> TestResponse {
        let project = project ?? node.project.id
        let start = try await client.descope(
            "/v1/auth/otp/\(path)/\(method)", bearer: session.map { "\(project):\($0)" } ?? project,
            json: #"{"loginId":"\#(loginId)","loginOptions":\#(loginOptions)}"#)
        #expect(start.status == .ok)
        #expect(try start.json()[method == "email" ? "maskedEmail" : "maskedPhone"] is String)
        let code = try await node.sender.code(to: loginId, count: count)
        return try await client.descope(
            "/v1/auth/otp/verify/\(method)", bearer: proof.map { "\(project):\($0)" } ?? project,
            json: #"{"loginId":"\#(loginId)","code":"\#(code)"}"#)
    }

    /// An email session (the victim of a code holder) with its refresh JWT, `sid` and user id, and the ways a verify
    /// fails to prove it: no refresh JWT, another session's, garbage, and its own in a `DSR` cookie of a project
    /// without cookie delivery (each as the bearer's refresh JWT and the cookie to send).
    static func victimSession(node: TestNode, client: some TestClientProtocol) async throws -> (
        refreshJwt: String, sid: String?, userId: String?, unproven: [(proof: String?, cookie: String?)]
    ) {
        let signedIn = try await signIn(email, method: "email", node: node, client: client)
        let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
        let sid =
            try await verified(try #require(signedIn["sessionJwt"] as? String), node: node, client: client)["sid"]
            as? String
        // Another session of the same user is no proof of this one.
        let other = try await signIn(email, method: "email", node: node, client: client, count: 2)
        let otherRefresh = try #require(other["refreshJwt"] as? String)
        return (
            refreshJwt, sid, (signedIn["user"] as? [String: Any])?["userId"] as? String,
            [(nil, nil), (otherRefresh, nil), ("not-a-jwt", nil), (nil, "DSR=\(refreshJwt)")]
        )
    }

    /// For each of `unproven` (from ``victimSession(node:client:)``), starts a session-bound code to ``phone`` at
    /// `/v1/auth/otp/{start}` with `json` and the session's refresh JWT, and verifies it that way; the verify
    /// answers, each checked to be 200.
    static func verifyUnproven(
        start path: String, _ json: String, session refreshJwt: String, _ unproven: [(proof: String?, cookie: String?)],
        node: TestNode, client: some TestClientProtocol
    ) async throws -> [TestResponse] {
        let pid = node.project.id
        var answers: [TestResponse] = []
        for (proof, cookie) in unproven {
            let start = try await client.descope("/v1/auth/otp/\(path)", bearer: "\(pid):\(refreshJwt)", json: json)
            #expect(start.status == .ok)
            let code = try await node.sender.code(to: phone, count: answers.count + 1)
            let verified = try await client.descope(
                "/v1/auth/otp/verify/sms", bearer: proof.map { "\(pid):\($0)" } ?? pid,
                json: #"{"loginId":"\#(phone)","code":"\#(code)"}"#, cookie: cookie)
            #expect(verified.status == .ok)
            answers.append(verified)
        }
        return answers
    }

    /// A token's claims after checking its ES256 signature against the face's `/v2/keys/{projectId}`.
    static func verified(_ token: String, node: TestNode, client: some TestClientProtocol) async throws
        -> [String: Any]
    {
        try await SessionAPITests.independentlyVerified(
            token, client: client, project: node.project, keySet: "/descope/v2/keys/\(node.project.id)")
    }

    @Test(
        "Email and SMS sign-up-or-in answer Descope's JWTResponse with signed DS and DSR tokens and the full user",
        arguments: TestEngine.available)
    func signUpOrIn(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            for (loginId, method) in [(Self.email, "email"), (Self.phone, "sms")] {
                let first = try await Self.signIn(loginId, method: method, node: node, client: client)
                #expect(first["firstSeen"] as? Bool == true)
                let user = try #require(first["user"] as? [String: Any])
                for key in [
                    "userId", "loginIds", "status", "createdTime", "roleNames", "ssoAppIds", "webauthn", "password",
                    "TOTP", "OAuth", "SAML", "SCIM",
                ] {
                    #expect(user[key] != nil, "\(key)")
                }
                #expect(user["loginIds"] as? [String] == [loginId])
                #expect(user["status"] as? String == "enabled")
                let session = try await Self.verified(
                    try #require(first["sessionJwt"] as? String), node: node, client: client)
                #expect(session["iss"] as? String == pid)
                #expect(session["sub"] as? String == user["userId"] as? String)
                #expect(session["drn"] as? String == "DS")
                #expect((session["amr"] as? [String])?.contains(method) == true)
                #expect(session["roles"] as? [String] == [])
                #expect(session["su"] == nil)
                #expect(session["aud"] == nil || session["aud"] as? String == pid)
                let refresh = try await Self.verified(
                    try #require(first["refreshJwt"] as? String), node: node, client: client)
                #expect(refresh["drn"] as? String == "DSR")
                #expect(refresh["sub"] as? String == user["userId"] as? String)
                let refreshExpiry = try #require(refresh["exp"] as? Int)
                let sessionExpiry = try #require(session["exp"] as? Int)
                #expect(refreshExpiry > sessionExpiry)

                let again = try await Self.signIn(loginId, method: method, node: node, client: client, count: 2)
                #expect(again["firstSeen"] as? Bool == false)
                #expect((again["user"] as? [String: Any])?["userId"] as? String == user["userId"] as? String)
            }
            let bare = try await client.descope("/v1/keys/\(pid)", method: .get, bearer: pid)
            let array = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: bare.body)) as? [[String: Any]])
            #expect(array.first?["kty"] as? String == "EC")
        }
    }

    @Test(
        "Refresh rotates the refresh JWT; a used one revokes its session; me, logout and logoutall take the refresh JWT",
        arguments: TestEngine.available)
    func sessions(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let signedIn = try await Self.signIn(Self.email, method: "email", node: node, client: client)
            let first = try #require(signedIn["refreshJwt"] as? String)
            let me = try await client.descope("/v1/auth/me", method: .get, bearer: "\(pid):\(first)")
            #expect(try me.json()["email"] as? String == Self.email)

            let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(first)")
            #expect(refreshed.status == .ok)
            let second = try #require(try refreshed.json()["refreshJwt"] as? String)
            #expect(second != first)
            #expect(try refreshed.json()["sessionJwt"] is String)
            let stale = try await client.descope("/v1/auth/me", method: .get, bearer: "\(pid):\(first)")
            #expect(try stale.descopeError() == "E064001")

            // The used one presented again: the whole session ends, the newer token with it.
            let reused = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(first)")
            #expect(reused.status == .unauthorized)
            #expect(try reused.descopeError() == "E064001")
            let revoked = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(second)")
            #expect(try revoked.descopeError() == "E064001")

            // Tampered: the claims changed, the signature kept.
            let fresh = try #require(
                try await Self.signIn(Self.email, method: "email", node: node, client: client, count: 2)["refreshJwt"]
                    as? String)
            let parts = fresh.split(separator: ".").map(String.init)
            var claims = try #require(
                try JSONSerialization.jsonObject(with: Data(Base64URL.decode(parts[1]) ?? [])) as? [String: Any])
            claims["sub"] = "usr_someone_else"
            let forged = [parts[0], Base64URL.encode(try JSONSerialization.data(withJSONObject: claims)), parts[2]]
                .joined(separator: ".")
            let tampered = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(forged)")
            #expect(try tampered.descopeError() == "E064001")
            let opaque = try await client.descope("/v1/auth/refresh", bearer: "\(pid):vrt_notajwt")
            #expect(try opaque.descopeError() == "E064001")

            let logout = try await client.descope("/v1/auth/logout", bearer: "\(pid):\(fresh)")
            #expect(logout.status == .ok)
            let afterLogout = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(fresh)")
            #expect(try afterLogout.descopeError() == "E064001")

            let a = try #require(
                try await Self.signIn(Self.email, method: "email", node: node, client: client, count: 3)["refreshJwt"]
                    as? String)
            let b = try #require(
                try await Self.signIn(Self.email, method: "email", node: node, client: client, count: 4)["refreshJwt"]
                    as? String)
            let all = try await client.descope("/v1/auth/logoutall", bearer: "\(pid):\(a)")
            #expect(all.status == .ok)
            let ended = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(b)")
            #expect(try ended.descopeError() == "E064001")
        }
    }

    @Test(
        "Step-up: a sign-in with loginOptions.stepup and the refresh JWT, verified with the refresh JWT, sets su",
        arguments: TestEngine.available)
    func stepUp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        _ = try await node.verity.users.create(
            CreateUserRequest(loginIds: [Self.email, Self.phone]), in: node.project)
        try await node.run { client in
            let signedIn = try await Self.signIn(Self.email, method: "email", node: node, client: client)
            let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            let withoutSession = try await client.descope(
                "/v1/auth/otp/signin/sms", bearer: pid,
                json: #"{"loginId":"\#(Self.phone)","loginOptions":{"stepup":true}}"#)
            #expect(try withoutSession.descopeError() == "E011003")
            let verified = try await Self.verifyCode(
                Self.phone, method: "sms", start: "signin", session: refreshJwt, proof: refreshJwt,
                loginOptions: #"{"stepup":true}"#, node: node, client: client)
            #expect(verified.status == .ok)
            let claims = try await Self.verified(
                try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["su"] as? Bool == true)
            #expect(Set(claims["amr"] as? [String] ?? []).isSuperset(of: ["email", "sms"]))
            #expect(claims["sid"] as? String != nil)
            // The answer carries a refresh JWT of the same session (descope-swift requires one) with no su; the
            // session's earlier refresh JWT still refreshes too, and the next session token has no su.
            let issued = try #require(try verified.json()["refreshJwt"] as? String)
            #expect(issued != refreshJwt)
            let issuedClaims = try await Self.verified(issued, node: node, client: client)
            #expect(issuedClaims["drn"] as? String == "DSR")
            #expect(issuedClaims["sid"] as? String == claims["sid"] as? String)
            #expect(issuedClaims["su"] == nil)
            for presented in [refreshJwt, issued] {
                let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(presented)")
                let next = try await Self.verified(
                    try #require(try refreshed.json()["sessionJwt"] as? String), node: node, client: client)
                #expect(next["su"] == nil)
                #expect(next["sid"] as? String == claims["sid"] as? String)
            }
            // Each is still used once: the step-up's refresh JWT presented again revokes the session.
            let reused = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(issued)")
            #expect(reused.status == .unauthorized)
        }
    }

    @Test(
        "Step-up: a code holder who does not prove the session gets a sign-in with that code only; DSR can prove it",
        arguments: TestEngine.available)
    func stepUpWithoutSessionProof(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        _ = try await node.verity.users.create(
            CreateUserRequest(loginIds: [Self.email, Self.phone]), in: node.project)
        try await node.run { client in
            let (refreshJwt, victimSid, _, unproven) = try await Self.victimSession(node: node, client: client)
            let answers = try await Self.verifyUnproven(
                start: "signin/sms", #"{"loginId":"\#(Self.phone)","loginOptions":{"stepup":true,"mfa":true}}"#,
                session: refreshJwt, unproven, node: node, client: client)
            let count = answers.count
            for verified in answers {
                let claims = try await Self.verified(
                    try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
                #expect(claims["su"] == nil)
                #expect(claims["acr"] == nil)
                #expect(Set(claims["amr"] as? [String] ?? []) == ["otp", "sms"])
                #expect(claims["sid"] as? String != victimSid)
                let issued = try #require(try verified.json()["refreshJwt"] as? String)
                let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(issued)")
                let next = try await Self.verified(
                    try #require(try refreshed.json()["sessionJwt"] as? String), node: node, client: client)
                #expect(Set(next["amr"] as? [String] ?? []) == ["otp", "sms"])
                #expect(next["acr"] == nil)
            }
            // The code was spent on that sign-in: the session itself was not stepped up.
            let unchanged = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(refreshJwt)")
            let victim = try await Self.verified(
                try #require(try unchanged.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(!(victim["amr"] as? [String] ?? []).contains("sms"))
            #expect(victim["acr"] == nil)
            let current = try #require(try unchanged.json()["refreshJwt"] as? String)

            // A project that delivers tokens as cookies reads the proof from the DSR cookie too.
            _ = try await node.verity.admin.updateProject(id: pid, name: nil) { $0.descopeCookies = true }
            let start = try await client.descope(
                "/v1/auth/otp/signin/sms", bearer: "\(pid):\(current)",
                json: #"{"loginId":"\#(Self.phone)","loginOptions":{"stepup":true}}"#)
            #expect(start.status == .ok)
            let code = try await node.sender.code(to: Self.phone, count: count + 1)
            let verified = try await client.descope(
                "/v1/auth/otp/verify/sms", bearer: pid, json: #"{"loginId":"\#(Self.phone)","code":"\#(code)"}"#,
                cookie: "DSR=\(current)")
            #expect(verified.status == .ok)
            let claims = try await Self.verified(
                try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["su"] as? Bool == true)
            #expect(claims["sid"] as? String == victimSid)
            #expect(Set(claims["amr"] as? [String] ?? []).isSuperset(of: ["email", "sms"]))
        }
    }

    @Test(
        "otp/update/phone and update/email: the proven address becomes the user's login id; another user's is E062107",
        arguments: TestEngine.available)
    func updateLoginIds(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        let other = "+14155550188"
        _ = try await node.verity.users.create(CreateUserRequest(loginIds: ["grace@example.com"]), in: node.project)
        try await node.run { client in
            let signedIn = try await Self.signIn(Self.email, method: "email", node: node, client: client)
            let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            let bearer = "\(pid):\(refreshJwt)"
            // Without the refresh JWT, or for a login id that is not the signed-in user's: refused, nothing sent.
            let unsigned = try await client.descope(
                "/v1/auth/otp/update/phone/sms", bearer: pid,
                json: #"{"loginId":"\#(Self.email)","phone":"\#(Self.phone)"}"#)
            #expect(try unsigned.descopeError() == "E011002")
            let foreign = try await client.descope(
                "/v1/auth/otp/update/phone/sms", bearer: bearer,
                json: #"{"loginId":"grace@example.com","phone":"\#(Self.phone)"}"#)
            #expect(try foreign.descopeError() == "E011003")
            let byEmail = try await client.descope(
                "/v1/auth/otp/update/phone/email", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","phone":"\#(Self.phone)"}"#)
            #expect(try byEmail.descopeError() == "E011003")

            // Add a phone number: the code goes to the new number, and verifying it adds the number.
            let start = try await client.descope(
                "/v1/auth/otp/update/phone/sms", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","phone":"\#(Self.phone)","addToLoginIDs":true}"#)
            #expect(start.status == .ok)
            #expect(try start.json()["maskedPhone"] is String)
            let code = try await node.sender.code(to: Self.phone)
            let wrong = try await client.descope(
                "/v1/auth/otp/verify/sms", bearer: pid,
                json: #"{"loginId":"\#(Self.phone)","code":"\#(code == "000000" ? "111111" : "000000")"}"#)
            #expect(try wrong.descopeError() == "E061102")
            let verified = try await client.descope(
                "/v1/auth/otp/verify/sms", bearer: bearer, json: #"{"loginId":"\#(Self.phone)","code":"\#(code)"}"#)
            #expect(verified.status == .ok)
            let user = try #require(try verified.json()["user"] as? [String: Any])
            #expect(Set(user["loginIds"] as? [String] ?? []) == [Self.email, Self.phone])
            #expect(user["phone"] as? String == Self.phone)
            let claims = try await Self.verified(
                try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["su"] == nil)
            // The session and its refresh JWT stay; me names the new login id.
            let me = try await client.descope("/v1/auth/me", method: .get, bearer: bearer)
            #expect(Set(try me.json()["loginIds"] as? [String] ?? []) == [Self.email, Self.phone])

            // Replace the phone number by one sent a code by WhatsApp.
            let replace = try await client.descope(
                "/v1/auth/otp/update/phone/whatsapp", bearer: bearer,
                json: #"{"loginId":"\#(Self.phone)","phone":"\#(other)"}"#)
            #expect(replace.status == .ok)
            let replaceCode = try await node.sender.code(to: other)
            let replaced = try await client.descope(
                "/v1/auth/otp/verify/whatsapp", bearer: bearer,
                json: #"{"loginId":"\#(other)","code":"\#(replaceCode)"}"#)
            #expect(replaced.status == .ok)
            let replacedUser = try #require(try replaced.json()["user"] as? [String: Any])
            #expect(Set(replacedUser["loginIds"] as? [String] ?? []) == [Self.email, other])

            // An email address another user holds: the code is sent (who holds an address is not told before it is
            // proven), then the verify is refused and the user keeps their address.
            let taken = try await client.descope(
                "/v1/auth/otp/update/email", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","email":"grace@example.com","addToLoginIDs":true}"#)
            #expect(taken.status == .ok)
            #expect(try taken.json()["maskedEmail"] is String)
            let takenCode = try await node.sender.code(to: "grace@example.com")
            let refused = try await client.descope(
                "/v1/auth/otp/verify/email", bearer: bearer,
                json: #"{"loginId":"grace@example.com","code":"\#(takenCode)"}"#)
            #expect(try refused.descopeError() == "E062107")
            let after = try await client.descope("/v1/auth/me", method: .get, bearer: bearer)
            #expect(Set(try after.json()["loginIds"] as? [String] ?? []) == [Self.email, other])

            // After logout the pending code changes nothing of that user: the logged-out refresh JWT proves no
            // session, so the code signs in the address it went to, as any sign-in code to it would.
            let again = try await client.descope(
                "/v1/auth/otp/update/email", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","email":"ada@example.org"}"#)
            #expect(again.status == .ok)
            let lateCode = try await node.sender.code(to: "ada@example.org")
            _ = try await client.descope("/v1/auth/logout", bearer: bearer)
            let late = try await client.descope(
                "/v1/auth/otp/verify/email", bearer: bearer,
                json: #"{"loginId":"ada@example.org","code":"\#(lateCode)"}"#)
            #expect(late.status == .ok)
            let lateUser = try #require(try late.json()["user"] as? [String: Any])
            #expect(lateUser["loginIds"] as? [String] == ["ada@example.org"])
            #expect(lateUser["userId"] as? String != (signedIn["user"] as? [String: Any])?["userId"] as? String)
        }
    }

    @Test(
        "otp/update: a code holder who does not prove the session gets a sign-in of the new address only; DSR proves it",
        arguments: TestEngine.available)
    func updateWithoutSessionProof(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let (refreshJwt, victimSid, victim, unproven) = try await Self.victimSession(node: node, client: client)
            let victimId = try #require(victim)
            let answers = try await Self.verifyUnproven(
                start: "update/phone/sms",
                #"{"loginId":"\#(Self.email)","phone":"\#(Self.phone)","addToLoginIDs":true}"#, session: refreshJwt,
                unproven, node: node, client: client)
            for verified in answers {
                // A session of the new number's own user, as a sign-in with the code gives: never the victim's.
                let user = try #require(try verified.json()["user"] as? [String: Any])
                #expect(user["loginIds"] as? [String] == [Self.phone])
                #expect(user["userId"] as? String != victimId)
                let claims = try await Self.verified(
                    try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
                #expect(claims["sid"] as? String != victimSid)
                #expect(claims["sub"] as? String != victimId)
                #expect(Set(claims["amr"] as? [String] ?? []) == ["otp", "sms"])
            }
            // The victim's user kept its login ids, and its session goes on as it was.
            let me = try await client.descope("/v1/auth/me", method: .get, bearer: "\(pid):\(refreshJwt)")
            #expect(try me.json()["loginIds"] as? [String] == [Self.email])

            // A project that delivers tokens as cookies reads the proof from the DSR cookie: the update applies.
            _ = try await node.verity.admin.updateProject(id: pid, name: nil) { $0.descopeCookies = true }
            let newNumber = "+14155550177"
            let start = try await client.descope(
                "/v1/auth/otp/update/phone/sms", bearer: "\(pid):\(refreshJwt)",
                json: #"{"loginId":"\#(Self.email)","phone":"\#(newNumber)"}"#)
            #expect(start.status == .ok)
            let code = try await node.sender.code(to: newNumber)
            let verified = try await client.descope(
                "/v1/auth/otp/verify/sms", bearer: pid, json: #"{"loginId":"\#(newNumber)","code":"\#(code)"}"#,
                cookie: "DSR=\(refreshJwt)")
            #expect(verified.status == .ok)
            let user = try #require(try verified.json()["user"] as? [String: Any])
            #expect(user["userId"] as? String == victimId)
            #expect(Set(user["loginIds"] as? [String] ?? []) == [Self.email, newNumber])
            let claims = try await Self.verified(
                try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["sid"] as? String == victimSid)
        }
    }

    @Test(
        "Cookie delivery: DS and DSR cookies (HttpOnly, SameSite=Strict), the refresh JWT only in DSR, refresh by DSR",
        arguments: TestEngine.available)
    func cookies(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            // Off by default: no cookies, and a DSR cookie is not a credential.
            let plain = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(plain.status == .ok)
            let plainCode = try await node.sender.code(to: Self.email)
            let plainVerified = try await client.descope(
                "/v1/auth/otp/verify/email", bearer: pid, json: #"{"loginId":"\#(Self.email)","code":"\#(plainCode)"}"#)
            #expect(plainVerified.headers[values: .setCookie].isEmpty)
            let plainRefresh = try #require(try plainVerified.json()["refreshJwt"] as? String)
            let ignored = try await client.descope("/v1/auth/refresh", bearer: pid, cookie: "DSR=\(plainRefresh)")
            #expect(try ignored.descopeError() == "E011002")

            _ = try await node.verity.admin.updateProject(id: pid, name: nil) { $0.descopeCookies = true }
            let verified = try await Self.verifyCode(Self.phone, method: "sms", node: node, client: client)
            #expect(verified.status == .ok)
            let body = try verified.json()
            #expect(body["refreshJwt"] == nil)
            let sessionJwt = try #require(body["sessionJwt"] as? String)
            let cookies = verified.headers[values: .setCookie]
            let ds = try #require(cookies.first { $0.hasPrefix("DS=") })
            let dsr = try #require(cookies.first { $0.hasPrefix("DSR=") })
            #expect(ds.hasPrefix("DS=\(sessionJwt);"))
            for cookie in [ds, dsr] {
                #expect(cookie.contains("; HttpOnly"))
                #expect(cookie.contains("; SameSite=Strict"))
                #expect(cookie.contains("; Path=/"))
                #expect(cookie.contains("; Max-Age="))
                #expect(!cookie.contains("Secure"))  // the test server is reached over plain HTTP
            }
            let now = Date()
            let behindHTTPS = DescopeTokens.cookie(
                "DSR", "x", until: now.addingTimeInterval(60), now: now, secure: true)
            #expect(behindHTTPS == "DSR=x; Path=/; Max-Age=60; HttpOnly; Secure; SameSite=Strict")
            let refreshJwt = String(dsr.dropFirst("DSR=".count).prefix { $0 != ";" })
            let claims = try await Self.verified(refreshJwt, node: node, client: client)
            #expect(claims["drn"] as? String == "DSR")

            // The refresh call takes the DSR cookie and answers the next one; the used one revokes the session.
            let refreshed = try await client.descope(
                "/v1/auth/refresh", bearer: pid, cookie: "other=1; DSR=\(refreshJwt)")
            #expect(refreshed.status == .ok)
            let next = try #require(refreshed.headers[values: .setCookie].first { $0.hasPrefix("DSR=") })
            #expect(!next.hasPrefix("DSR=\(refreshJwt);"))
            let reused = try await client.descope("/v1/auth/refresh", bearer: pid, cookie: "DSR=\(refreshJwt)")
            #expect(try reused.descopeError() == "E064001")
            let nextJwt = String(next.dropFirst("DSR=".count).prefix { $0 != ";" })
            let revoked = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(nextJwt)")
            #expect(try revoked.descopeError() == "E064001")
        }
    }

    @Test("Voice and WhatsApp sign-up-or-in are served like SMS", arguments: TestEngine.available)
    func voiceAndWhatsApp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, settings: .voiceOn)
        try await node.run { client in
            let byVoice = try await Self.signIn(Self.phone, method: "voice", node: node, client: client)
            #expect(byVoice["firstSeen"] as? Bool == true)
            let claims = try await Self.verified(
                try #require(byVoice["sessionJwt"] as? String), node: node, client: client)
            #expect((claims["amr"] as? [String] ?? []).contains("voice"))
            let byWhatsApp = try await Self.signIn(
                Self.phone, method: "whatsapp", node: node, client: client, count: 2)
            #expect(byWhatsApp["firstSeen"] as? Bool == false)
            let again = try await Self.verified(
                try #require(byWhatsApp["sessionJwt"] as? String), node: node, client: client)
            #expect((again["amr"] as? [String] ?? []).contains("whatsapp"))
        }
    }

    @Test("Management with projectId:managementKey: users, roles, roles on users", arguments: TestEngine.available)
    func management(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        let bearer = "\(pid):\(node.apiKey)"
        try await node.run { client in
            let role = try await client.descope(
                "/v1/mgmt/role/create", bearer: bearer,
                json: #"{"name":"admin","description":"Admins","permissionNames":["users.write"]}"#)
            #expect(role.status == .ok)
            let roles = try await client.descope("/v1/mgmt/role/all", method: .get, bearer: bearer)
            let listed = try #require(try roles.json()["roles"] as? [[String: Any]])
            #expect(listed.first?["name"] as? String == "admin")
            #expect(listed.first?["permissionNames"] as? [String] == ["users.write"])

            let created = try await client.descope(
                "/v1/mgmt/user/create", bearer: bearer,
                json: #"""
                    {"loginId":"\#(Self.email)","phone":"\#(Self.phone)","displayName":"Ada","roleNames":[],
                     "userTenants":[],"customAttributes":{"plan":"pro"},"invite":false,"test":false}
                    """#)
            #expect(created.status == .ok)
            let user = try #require(try created.json()["user"] as? [String: Any])
            #expect(user["loginIds"] as? [String] == [Self.email, Self.phone])
            #expect(user["name"] as? String == "Ada")
            #expect((user["customAttributes"] as? [String: String])?["plan"] == "pro")

            let added = try await client.descope(
                "/v2/mgmt/user/update/role/add", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","roleNames":["admin"]}"#)
            #expect((try added.json()["user"] as? [String: Any])?["roleNames"] as? [String] == ["admin"])
            let loaded = try await client.descope("/v1/mgmt/user?loginId=\(Self.email)", method: .get, bearer: bearer)
            #expect((try loaded.json()["user"] as? [String: Any])?["roleNames"] as? [String] == ["admin"])

            // The role reaches the tokens.
            let signedIn = try await Self.signIn(Self.email, method: "email", node: node, client: client)
            #expect(signedIn["firstSeen"] as? Bool == false)
            let claims = try await Self.verified(
                try #require(signedIn["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["roles"] as? [String] == ["admin"])
            #expect(claims["permissions"] as? [String] == ["users.write"])
            #expect(claims["plan"] as? String == "pro")

            let search = try await client.descope(
                "/v2/mgmt/user/search", bearer: bearer, json: #"{"limit":10,"page":0,"roleNames":["admin"]}"#)
            #expect((try search.json()["users"] as? [[String: Any]])?.count == 1)
            let updated = try await client.descope(
                "/v1/mgmt/user/update", bearer: bearer,
                json: #"{"loginId":"\#(Self.email)","displayName":"Ada L.","roleNames":[]}"#)
            let after = try #require(try updated.json()["user"] as? [String: Any])
            #expect(after["name"] as? String == "Ada L.")
            #expect(after["roleNames"] as? [String] == [])
            #expect(after["loginIds"] as? [String] == [Self.email])

            let unknownRole = try await client.descope(
                "/v1/mgmt/user/create", bearer: bearer, json: #"{"loginId":"bob@example.com","roleNames":["nope"]}"#)
            #expect(try unknownRole.descopeError() == "E011003")
            let none = try await client.descope("/v1/mgmt/user?loginId=bob@example.com", method: .get, bearer: bearer)
            #expect(try none.descopeError() == "E062108")

            let deleted = try await client.descope(
                "/v1/mgmt/user/delete", bearer: bearer, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(deleted.status == .ok)
            let gone = try await client.descope("/v1/mgmt/user?loginId=\(Self.email)", method: .get, bearer: bearer)
            #expect(try gone.descopeError() == "E062108")
            let roleDeleted = try await client.descope(
                "/v1/mgmt/role/delete", bearer: bearer, json: #"{"name":"admin"}"#)
            #expect(roleDeleted.status == .ok)

            // Credentials: no key, a session's project id alone, another project's key, a mismatched project id.
            let (other, otherKey) = try await node.otherProject()
            for wrong in [pid, "\(pid):vk_unknown", "\(pid):\(otherKey)", "\(other.id):\(node.apiKey)"] {
                let refused = try await client.descope("/v1/mgmt/role/all", method: .get, bearer: wrong)
                #expect(refused.status == .unauthorized, "\(wrong.prefix(8))")
                #expect(try refused.descopeError() == "E011002")
            }
        }
    }

    @Test(
        "Refusals in Descope's shape: wrong code, too many, unknown project, mismatched project id",
        arguments: TestEngine.available)
    func refusals(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let start = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(start.status == .ok)
            let code = try await node.sender.code(to: Self.email)
            let wrongCode = code == "000000" ? "111111" : "000000"
            let wrong = try await client.descope(
                "/v1/auth/otp/verify/email", bearer: pid, json: #"{"loginId":"\#(Self.email)","code":"\#(wrongCode)"}"#)
            #expect(wrong.status == .unauthorized)
            #expect(try wrong.descopeError() == "E061102")
            var last = wrong
            // The fifth wrong code ends the code.
            for _ in 0..<4 {
                last = try await client.descope(
                    "/v1/auth/otp/verify/email", bearer: pid,
                    json: #"{"loginId":"\#(Self.email)","code":"\#(wrongCode)"}"#)
            }
            #expect(last.status == .tooManyRequests)
            #expect(try last.descopeError() == "E061103")
            #expect(last.headers[.retryAfter] != nil)

            let unknown = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: "prj_unknown", json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(try unknown.descopeError() == "E011002")
            var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(pid)"]
            headers[HTTPField.Name("x-descope-project-id")!] = "prj_other"
            let mismatch = try await client.execute(
                uri: "/descope/v1/auth/otp/signup-in/email", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"loginId":"\#(Self.email)"}"#))
            #expect(try mismatch.descopeError() == "E011002")
            let keysOfOther = try await client.descope("/v2/keys/prj_other", method: .get, bearer: pid)
            #expect(try keysOfOther.descopeError() == "E011002")
            let badMethod = try await client.descope(
                "/v1/auth/otp/signup-in/pigeon", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(try badMethod.descopeError() == "E011003")
            let mismatchedChannel = try await client.descope(
                "/v1/auth/otp/signup-in/sms", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(try mismatchedChannel.descopeError() == "E011003")
            let claims = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: pid,
                json: #"{"loginId":"\#(Self.email)","loginOptions":{"customClaims":{"sub":"usr_admin"}}}"#)
            #expect(try claims.descopeError() == "E011003")
            let noRoute = try await client.descope("/v1/auth/nothing", bearer: pid)
            #expect(noRoute.status == .notFound)
            #expect(try noRoute.descopeError() == "E011003")
        }
    }

    @Test("Every limit answers E130429 with Retry-After", arguments: TestEngine.available)
    func rateLimited(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine, configure: { $0.rateLimits.perClientAddress = RateLimitPolicy(capacity: 2, period: 3600) })
        let pid = node.project.id
        try await node.run { client in
            var last: TestResponse?
            for index in 0..<3 {
                last = try await client.descope(
                    "/v1/auth/otp/signup-in/email", bearer: pid, json: #"{"loginId":"user\#(index)@example.com"}"#)
            }
            let limited = try #require(last)
            #expect(limited.status == .tooManyRequests)
            #expect(try limited.descopeError() == "E130429")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 > 0)
        }
    }

    @Test(
        "Hostile input gets a 4xx in Descope's shape, never a 5xx, and sends nothing", arguments: TestEngine.available)
    func hostileInput(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let bodies = [
                "", "null", "[]", "42", #"{"loginId":42}"#, #"{"loginId":""}"#,
                #"{"loginId":"\#(String(repeating: "9", count: 5000))"}"#, #"{"loginId":"+1415555٠١٠٠"}"#,
                #"{"loginId":["a"],"code":{}}"#, #"{"loginId":"no login id","loginOptions":{"stepup":"yes"}}"#,
                #"{"loginId":"no login id","loginOptions":{"customClaims":{"admin":true}}}"#,
                String(repeating: "{", count: 10000),
            ]
            let paths = [
                "/v1/auth/otp/signup-in/sms", "/v1/auth/otp/signin/email", "/v1/auth/otp/signup/email",
                "/v1/auth/otp/verify/email", "/v1/auth/refresh", "/v1/auth/logout", "/v1/auth/logoutall",
                "/v1/mgmt/user/create", "/v1/mgmt/user/update", "/v2/mgmt/user/search", "/v1/mgmt/user/delete",
                "/v2/mgmt/user/update/role/add", "/v1/mgmt/role/create", "/v1/mgmt/role/delete",
            ]
            let bearers = [
                pid, "\(pid):\(node.apiKey)", "\(pid):\(String(repeating: "a.", count: 3000))", "\(pid)::", "",
                "prj_\(String(repeating: "x", count: 100))",
            ]
            for path in paths {
                // A search ignores keys it does not know, and an empty one is a search for everyone.
                for body in bodies where !(path.hasSuffix("/search") && (body.isEmpty || body.hasPrefix("{\""))) {
                    for bearer in bearers {
                        let response = try await client.descope(path, bearer: bearer.isEmpty ? nil : bearer, json: body)
                        #expect(
                            (400..<500).contains(Int(response.status.code)),
                            "\(path) \(body.prefix(30)) \(bearer.prefix(8))")
                        _ = try response.descopeError()
                    }
                }
            }
            for path in [
                "/v1/auth/me", "/v1/mgmt/user?loginId=%00", "/v1/mgmt/user", "/v2/keys/%2e%2e",
            ] {
                for bearer in bearers {
                    let response = try await client.descope(path, method: .get, bearer: bearer.isEmpty ? nil : bearer)
                    #expect((400..<500).contains(Int(response.status.code)), "\(path) \(bearer.prefix(8))")
                    _ = try response.descopeError()
                }
            }
            let huge = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: pid,
                json: #"{"loginId":"\#(String(repeating: "1", count: 2_000_000))"}"#)
            #expect(huge.status == .contentTooLarge)
            _ = try huge.descopeError()
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("VERITY_DESCOPE_PREFIX: a path, or off; never the root")
    func prefix() async throws {
        for (text, expected) in [
            ("/descope", "/descope"), ("/auth/descope/", "/auth/descope"), ("off", nil),
            // Empty is unset, as for every variable: the default.
            ("", "/descope"),
        ] {
            var configuration = ServerConfiguration()
            try configuration.apply(environment: ["VERITY_DESCOPE_PREFIX": text])
            #expect(configuration.descopePrefix == expected, "\(text)")
        }
        for text in ["/", "descope", "/v1", "/a b", "/:id"] {
            var configuration = ServerConfiguration()
            #expect(throws: ConfigurationError.self, "\(text)") {
                try configuration.apply(environment: ["VERITY_DESCOPE_PREFIX": text])
            }
        }
        let off = try await TestNode.make(.sqlite, configure: { $0.descopePrefix = nil })
        try await off.run { client in
            let response = try await client.descope("/v2/keys/\(off.project.id)", method: .get, bearer: off.project.id)
            #expect(response.status == .notFound)
        }
        let moved = try await TestNode.make(.sqlite, configure: { $0.descopePrefix = "/auth/ds" })
        try await moved.run { client in
            let response = try await client.execute(
                uri: "/auth/ds/v2/keys/\(moved.project.id)", method: .get, headers: [:], body: nil)
            #expect(response.status == .ok)
        }
    }
}
