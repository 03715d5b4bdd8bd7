import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// `loginOptions.customClaims` (claims a session carries from its start) and what logout does to the cookies.
extension DescopeFaceTests {
    @Test(
        "customClaims: both tokens carry them under nsec beside the user's, every refresh keeps them",
        arguments: TestEngine.available)
    func customClaims(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        _ = try await node.verity.users.create(
            CreateUserRequest(
                loginIds: [Self.email], customClaims: ["plan": .string("basic"), "team": .string("blue")]),
            in: node.project)
        try await node.run { client in
            let signedIn = try await Self.signIn(
                Self.email, method: "email", loginOptions: #"{"customClaims":{"plan":"pro","cart":{"items":[1,2]}}}"#,
                node: node,
                client: client)
            let userId = try #require((signedIn["user"] as? [String: Any])?["userId"] as? String)
            var refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            var tokens = [try #require(signedIn["sessionJwt"] as? String), refreshJwt]
            // Every token the session issues, now and after each refresh, carries the claims.
            for round in 0..<3 {
                for token in tokens {
                    let claims = try await Self.verified(token, node: node, client: client)
                    // Nested under `nsec` (Descope's "non-secure"): they never pass for the user's own claims.
                    let nsec = try #require(claims["nsec"] as? [String: Any], "round \(round)")
                    #expect(nsec["plan"] as? String == "pro")
                    #expect((nsec["cart"] as? [String: Any])?["items"] as? [Int] == [1, 2])
                    #expect(claims["plan"] as? String == "basic")
                    #expect(claims["team"] as? String == "blue")
                    #expect(claims["cart"] == nil)
                    #expect(claims["sub"] as? String == userId)
                    #expect(claims["su"] == nil)
                }
                let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(refreshJwt)")
                #expect(refreshed.status == .ok)
                let body = try refreshed.json()
                refreshJwt = try #require(body["refreshJwt"] as? String)
                tokens = [try #require(body["sessionJwt"] as? String), refreshJwt]
            }

            // The claims were the session's, not the user's: a later sign-in without them has none.
            let later = try await Self.signIn(Self.email, method: "email", node: node, client: client, count: 2)
            for key in ["sessionJwt", "refreshJwt"] {
                let claims = try await Self.verified(
                    try #require(later[key] as? String), node: node, client: client)
                #expect(claims["plan"] as? String == "basic")
                #expect(claims["nsec"] == nil)
            }
            // The first session still has its own.
            let first = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(refreshJwt)")
            let firstClaims = try await Self.verified(
                try #require(try first.json()["sessionJwt"] as? String), node: node, client: client)
            #expect((firstClaims["nsec"] as? [String: Any])?["plan"] as? String == "pro")
        }
    }

    @Test(
        "customClaims: a new start replaces the pending code's claims, and a resend without them clears them",
        arguments: TestEngine.available)
    func customClaimsFollowTheLatestStart(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            func start(_ options: String) async throws {
                let start = try await client.descope(
                    "/v1/auth/otp/signup-in/email", bearer: pid,
                    json: #"{"loginId":"\#(Self.email)","loginOptions":\#(options)}"#)
                #expect(start.status == .ok)
            }
            try await start(#"{"customClaims":{"a":1}}"#)
            let replaced = try await Self.signIn(
                Self.email, method: "email", loginOptions: #"{"customClaims":{"b":2}}"#, node: node, client: client,
                count: 2)
            let claims = try await Self.verified(
                try #require(replaced["sessionJwt"] as? String), node: node, client: client)
            #expect(claims["nsec"] as? [String: Int] == ["b": 2])

            try await start(#"{"customClaims":{"a":1}}"#)
            let cleared = try await Self.signIn(Self.email, method: "email", node: node, client: client, count: 4)
            let none = try await Self.verified(
                try #require(cleared["sessionJwt"] as? String), node: node, client: client)
            #expect(none["nsec"] == nil)
        }
    }

    @Test(
        "customClaims with a registered or Descope claim name, too large or not an object: E011003, nothing sent",
        arguments: TestEngine.available)
    func customClaimsRefused(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let refused = [
                #"{"sub":"usr_someone"}"#, #"{"amr":["pwd"]}"#, #"{"roles":["admin"]}"#, #"{"exp":1}"#,
                #"{"iss":"x"}"#, #"{"su":true}"#, #"{"drn":"DSR"}"#, #"{"vrt":"vrt_x"}"#, #"{"":1}"#,
                #"{"big":"\#(String(repeating: "x", count: 4100))"}"#, #""admin""#, "[1]", "true",
            ]
            for claims in refused {
                for path in ["/v1/auth/otp/signup-in/email", "/v1/auth/otp/signin/email"] {
                    let response = try await client.descope(
                        path, bearer: pid,
                        json: #"{"loginId":"\#(Self.email)","loginOptions":{"customClaims":\#(claims)}}"#
                    )
                    #expect(response.status == .badRequest, "\(claims)")
                    #expect(try response.descopeError() == "E011003", "\(claims)")
                }
            }
            #expect(node.sender.messages(to: Self.email).isEmpty)
        }
    }

    @Test(
        "customClaims on a step-up: the stepped-up session gains them beside its own, and keeps them on refresh",
        arguments: TestEngine.available)
    func customClaimsOnStepUp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        _ = try await node.verity.users.create(
            CreateUserRequest(loginIds: [Self.email, Self.phone]), in: node.project)
        try await node.run { client in
            let signedIn = try await Self.signIn(
                Self.email, method: "email", loginOptions: #"{"customClaims":{"plan":"pro","level":"low"}}"#,
                node: node,
                client: client)
            let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            let reserved = try await client.descope(
                "/v1/auth/otp/signin/sms", bearer: "\(pid):\(refreshJwt)",
                json: #"{"loginId":"\#(Self.phone)","loginOptions":{"stepup":true,"customClaims":{"su":false}}}"#)
            #expect(try reserved.descopeError() == "E011003")
            #expect(node.sender.messages(to: Self.phone).isEmpty)
            let verified = try await Self.verifyCode(
                Self.phone, method: "sms", start: "signin", session: refreshJwt, proof: refreshJwt,
                loginOptions: #"{"mfa":true,"customClaims":{"level":"high"}}"#, node: node, client: client)
            #expect(verified.status == .ok)
            let steppedUp = try await Self.verified(
                try #require(try verified.json()["sessionJwt"] as? String), node: node, client: client)
            #expect(steppedUp["su"] as? Bool == true)
            #expect(steppedUp["nsec"] as? [String: String] == ["plan": "pro", "level": "high"])

            let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(refreshJwt)")
            #expect(refreshed.status == .ok)
            for key in ["sessionJwt", "refreshJwt"] {
                let claims = try await Self.verified(
                    try #require(try refreshed.json()[key] as? String), node: node, client: client)
                #expect(claims["nsec"] as? [String: String] == ["plan": "pro", "level": "high"])
                #expect(claims["su"] == nil)
            }
        }
    }

    @Test(
        "The native API's sessionClaims: in every session token, never over the user's claims; reserved names refused",
        arguments: TestEngine.available)
    func nativeSessionClaims(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.users.create(
            CreateUserRequest(loginIds: [Self.email], customClaims: ["plan": .string("basic")]), in: node.project)
        try await node.run { client in
            let refused = try await client.auth(
                .post, "otp/start", project: node.project,
                json: #"{"loginId":"\#(Self.email)","sessionClaims":{"sid":"ses_x"}}"#)
            #expect(try refused.problem().code == "invalid_claims")
            let started = try await client.auth(
                .post, "otp/start", project: node.project,
                json: #"{"loginId":"\#(Self.email)","sessionClaims":{"device":"kiosk-7","plan":"pro"}}"#)
            #expect(started.status == .ok)
            let code = try await node.sender.code(to: Self.email)
            let signedIn = try await client.auth(
                .post, "otp/verify", project: node.project,
                json: #"{"loginId":"\#(Self.email)","code":"\#(code)"}"#
            ).decode(AuthResponse.self)
            let claims = try await SessionAPITests.independentlyVerified(
                signedIn.sessionJwt, client: client, project: node.project)
            #expect(claims["device"] as? String == "kiosk-7")
            #expect(claims["plan"] as? String == "basic")  // the backend's claim wins over the app's
            let refreshed = try await client.refresh(signedIn.refreshToken, project: node.project)
                .decode(AuthResponse.self)
            let next = try await SessionAPITests.independentlyVerified(
                refreshed.sessionJwt, client: client, project: node.project)
            #expect(next["device"] as? String == "kiosk-7")
            #expect(next["plan"] as? String == "basic")
        }
    }

    @Test(
        "logout and logoutall clear the DS and DSR cookies of a project with cookie delivery, and only there",
        arguments: TestEngine.available)
    func logoutClearsCookies(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        try await node.run { client in
            let plain = try await Self.signIn(Self.email, method: "email", node: node, client: client)
            let plainRefresh = try #require(plain["refreshJwt"] as? String)
            let plainLogout = try await client.descope("/v1/auth/logout", bearer: "\(pid):\(plainRefresh)")
            #expect(plainLogout.status == .ok)
            #expect(plainLogout.headers[values: .setCookie].isEmpty)

            _ = try await node.verity.admin.updateProject(id: pid, name: nil) { $0.descopeCookies = true }
            for (index, path) in ["/v1/auth/logout", "/v1/auth/logoutall"].enumerated() {
                let verified = try await Self.verifyCode(
                    Self.phone, method: "sms", node: node, client: client, count: index + 1)
                let set = verified.headers[values: .setCookie]
                let dsr = try #require(set.first { $0.hasPrefix("DSR=") })
                let refreshJwt = String(dsr.dropFirst("DSR=".count).prefix { $0 != ";" })

                let loggedOut = try await client.descope(path, bearer: pid, cookie: "DSR=\(refreshJwt)")
                #expect(loggedOut.status == .ok, "\(path)")
                let cleared = loggedOut.headers[values: .setCookie].sorted()
                #expect(
                    cleared == [
                        "DS=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict",
                        "DSR=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict",
                    ], "\(path)")
                // The same attributes as when they were set, so the browser drops those very cookies.
                for name in ["DS", "DSR"] {
                    let original = try #require(set.first { $0.hasPrefix("\(name)=") })
                    let attributes = { (cookie: String) in
                        cookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
                            .filter { !$0.hasPrefix("Max-Age=") }
                    }
                    #expect(
                        attributes(original) == attributes(try #require(cleared.first { $0.hasPrefix("\(name)=") })))
                }
                let refused = try await client.descope("/v1/auth/refresh", bearer: "\(pid):\(refreshJwt)")
                #expect(try refused.descopeError() == "E064001", "\(path)")
            }
        }
    }
}
