import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The native passkey API's requests: JSON bodies from the software authenticator's dictionaries.
extension TestClientProtocol {
    func passkeys(
        _ method: HTTPRequest.Method, _ path: String = "", project: Project, body: [String: Any]? = nil,
        session: String? = nil
    ) async throws -> TestResponse {
        let json = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        return try await auth(method, "passkeys\(path)", project: project, json: json, session: session)
    }

    /// Options as the server answered them: the challenge, and the user handle of creation options.
    func passkeyOptions(_ path: String, project: Project, body: [String: Any]? = nil, session: String? = nil)
        async throws -> (challenge: [UInt8], userHandle: Data, allowed: [String])
    {
        let response = try await passkeys(.post, path, project: project, body: body, session: session)
        #expect(response.status == .ok)
        let options = try #require(
            try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        let encoded = try #require(options["challenge"] as? String)
        let challenge = try #require(Base64URL.decode(encoded))
        let user = (options["user"] as? [String: Any])?["id"] as? String
        let allowed = (options["allowCredentials"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        return (challenge, Data(user.flatMap(Base64URL.decode) ?? []), allowed)
    }

    /// Registers a new passkey of `authenticator` for the signed-in session.
    func registerPasskey(_ authenticator: inout SoftwareAuthenticator, project: Project, session: String)
        async throws -> Data
    {
        let options = try await passkeyOptions("/registration/options", project: project, session: session)
        let registration = authenticator.register(challenge: options.challenge, userHandle: options.userHandle)
        let verified = try await passkeys(
            .post, "/registration/verify", project: project, body: registration.json, session: session)
        #expect(verified.status == .ok)
        return registration.credentialID
    }
}

extension TestClientProtocol {
    /// Signs `loginId` in by a code and registers a passkey for them: the session, the authenticator and its key.
    func signedInWithPasskey(_ loginId: String, node: TestNode, project: Project) async throws
        -> (AuthResponse, SoftwareAuthenticator, Data)
    {
        let session = try await signIn(loginId, node: node)
        var authenticator = SoftwareAuthenticator()
        let key = try await registerPasskey(&authenticator, project: project, session: session.sessionJwt)
        return (session, authenticator, key)
    }
}

@Suite("The native passkey API over HTTP")
struct PasskeyAPITests {
    /// Turns passkeys on for the node's project, user verification `required` or `preferred`.
    static func passkeysOn(_ node: TestNode, userVerification: String = "required") async throws -> Project {
        let change = try ProjectSettingsChange(
            PasskeyProjectSettingsTests.change.merging([.passkeyUserVerification: userVerification]) { $1 })
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        return try await node.verity.admin.project(id: node.project.id)
    }

    static func claims(_ token: String, client: some TestClientProtocol, project: Project) async throws
        -> (amr: [String], acr: String?)
    {
        let claims = try await SessionAPITests.independentlyVerified(token, client: client, project: project)
        return (claims["amr"] as? [String] ?? [], claims["acr"] as? String)
    }

    @Test(
        "sessionClaims on the sign-in options ride in the session's tokens; a registered claim name is invalid_claims",
        arguments: TestEngine.available)
    func sessionClaims(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            var (first, authenticator, key) = try await client.signedInWithPasskey(
                "ada@example.com", node: node, project: project)
            for claims in [["sub": "usr_other"], ["amr": ["pwd"]], ["iss": "elsewhere"]] as [[String: Any]] {
                let refused = try await client.passkeys(
                    .post, "/authentication/options", project: project, body: ["sessionClaims": claims])
                #expect(refused.status == .badRequest)
                #expect(try refused.problem().code == "invalid_claims")
            }
            let options = try await client.passkeyOptions(
                "/authentication/options", project: project,
                body: ["loginId": "ada@example.com", "sessionClaims": ["plan": "pro", "seats": 3]])
            let assertion = try authenticator.assert(challenge: options.challenge, credentialID: key)
            let verified = try await client.passkeys(
                .post, "/authentication/verify", project: project, body: assertion.json)
            let session = try verified.decode(AuthResponse.self)
            #expect(session.user.id == first.user.id)
            let claims = try await SessionAPITests.independentlyVerified(
                session.sessionJwt, client: client, project: project)
            #expect(claims["plan"] as? String == "pro" && claims["seats"] as? Int == 3)
            let refreshed = try await client.auth(
                .post, "refresh", project: project, json: #"{"refreshToken":"\#(session.refreshToken ?? "")"}"#)
            let again = try await SessionAPITests.independentlyVerified(
                try refreshed.decode(AuthResponse.self).sessionJwt, client: client, project: project)
            #expect(again["plan"] as? String == "pro", "every token of the session carries them")
        }
    }

    @Test(
        "Sign-in by passkey: amr hwk or swk by BE, user and acr mfa by UV, in the token and in me; discoverable and by login id",
        arguments: TestEngine.available)
    func signInClaims(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node, userVerification: "preferred")
        try await node.run { client in
            let first = try await client.signIn("ada@example.com", node: node)
            for (backupEligible, userVerified) in [(false, true), (true, true), (false, false), (true, false)] {
                var authenticator = SoftwareAuthenticator()
                authenticator.backupEligible = backupEligible
                authenticator.backedUp = backupEligible
                let id = try await client.registerPasskey(&authenticator, project: project, session: first.sessionJwt)
                authenticator.userVerified = userVerified
                let options = try await client.passkeyOptions(
                    "/authentication/options", project: project,
                    body: userVerified ? [:] : ["loginId": "ADA@example.com"])
                #expect(options.allowed.contains(Base64URL.encode(id)) == !userVerified)
                let assertion = try authenticator.assert(challenge: options.challenge, credentialID: id)
                let verified = try await client.passkeys(
                    .post, "/authentication/verify", project: project, body: assertion.json)
                #expect(verified.status == .ok)
                let session = try verified.decode(AuthResponse.self)
                #expect(session.user.id == first.user.id && session.refreshToken != nil)
                let expected = ([backupEligible ? "swk" : "hwk"] + (userVerified ? ["user"] : []))
                let token = try await Self.claims(session.sessionJwt, client: client, project: project)
                #expect(token.amr == expected && token.acr == (userVerified ? "mfa" : nil))
                let me = try await client.auth(.get, "me", project: project, session: session.sessionJwt)
                let body = try me.decode(MeResponse.self)
                #expect(body.amr == expected && body.acr == (userVerified ? "mfa" : nil))
            }
            let listed = try await client.passkeys(.get, project: project, session: first.sessionJwt)
            let page = try listed.decode(Page<PasskeyJSON>.self)
            #expect(page.items.count == 4 && page.items.filter(\.backupEligible).count == 2)
            #expect(page.items.allSatisfy { $0.lastUsedAt != nil && $0.friendlyName == "Passkey" })
        }
    }

    @Test(
        "Sign-in and step-up refuse an unissued challenge, a replay, a flipped signature bit, another user's credential, a wrong origin, a counter regression (recorded) and missing UV; no session is opened or raised",
        arguments: TestEngine.available)
    func assertionRefusals(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            let (ada, adasAuthenticator, adasKey) = try await client.signedInWithPasskey(
                "ada@example.com", node: node, project: project)
            var adas = adasAuthenticator
            let (_, bobsAuthenticator, bobsKey) = try await client.signedInWithPasskey(
                "bob@example.com", node: node, project: project)
            var bobs = bobsAuthenticator

            for ceremony in ["authentication", "stepup"] {
                let session = ceremony == "stepup" ? ada.sessionJwt : nil
                let body: [String: Any]? = ceremony == "stepup" ? nil : ["loginId": "ada@example.com"]
                func options() async throws -> [UInt8] {
                    try await client.passkeyOptions(
                        "/\(ceremony)/options", project: project, body: body, session: session
                    ).challenge
                }
                func refusal(_ json: [String: Any]) async throws -> (HTTPResponse.Status, String?) {
                    let response = try await client.passkeys(
                        .post, "/\(ceremony)/verify", project: project, body: json, session: session)
                    return (response.status, try? response.problem().code)
                }

                let unissued = try adas.assert(challenge: Array(repeating: 9, count: 32), credentialID: adasKey)
                #expect(try await refusal(unissued.json) == (.notFound, "challenge_not_found"))

                let good = try adas.assert(challenge: try await options(), credentialID: adasKey)
                let accepted = try await client.passkeys(
                    .post, "/\(ceremony)/verify", project: project, body: good.json, session: session)
                #expect(accepted.status == .ok)
                #expect(try await refusal(good.json) == (.notFound, "challenge_not_found"))

                var flipped = try adas.assert(challenge: try await options(), credentialID: adasKey)
                flipped.signature[flipped.signature.count / 2] ^= 1
                #expect(try await refusal(flipped.json) == (.badRequest, "invalid_signature"))

                let stolen = try bobs.assert(challenge: try await options(), credentialID: bobsKey)
                #expect(try await refusal(stolen.json) == (.forbidden, "wrong_factor"))

                var elsewhere = adas
                elsewhere.origin = "https://evil.example.net"
                let phished = try elsewhere.assert(challenge: try await options(), credentialID: adasKey)
                #expect(try await refusal(phished.json) == (.forbidden, "forbidden"))

                var unverified = adas
                unverified.userVerified = false
                let noUV = try unverified.assert(challenge: try await options(), credentialID: adasKey)
                #expect(try await refusal(noUV.json) == (.forbidden, "user_verification_required"))

                var cloned = adas
                cloned.counter = 1
                let regressed = try cloned.assert(challenge: try await options(), credentialID: adasKey)
                #expect(try await refusal(regressed.json) == (.forbidden, "forbidden"))
            }
            let events = try await node.verity.sessions.securityEvents(userId: ada.user.id, limit: nil, in: project)
            #expect(events.items.map(\.type) == ["passkey_counter_regressed", "passkey_counter_regressed"])
            // Two sessions for Ada: the code sign-in and the one accepted passkey sign-in.
            #expect(try await node.verity.sessions.activeSessions(userId: ada.user.id, in: project).count == 2)
            let me = try await client.auth(.get, "me", project: project, session: ada.sessionJwt)
            #expect(try me.decode(MeResponse.self).amr == ["otp", "email", "hwk", "user"])
        }
    }

    @Test(
        "Step-up by passkey over HTTP: the session gains the passkey's amr and acr mfa; another user's step-up challenge is refused",
        arguments: TestEngine.available)
    func stepUp(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            let (ada, adasAuthenticator, adasKey) = try await client.signedInWithPasskey(
                "ada@example.com", node: node, project: project)
            var adas = adasAuthenticator
            let bob = try await client.signIn("bob@example.com", node: node)
            let bobsChallenge = try await client.passkeyOptions(
                "/stepup/options", project: project, session: bob.sessionJwt)
            let onBobs = try adas.assert(challenge: bobsChallenge.challenge, credentialID: adasKey)
            let refused = try await client.passkeys(
                .post, "/stepup/verify", project: project, body: onBobs.json, session: ada.sessionJwt)
            #expect(try refused.status == .notFound && refused.problem().code == "challenge_not_found")

            let options = try await client.passkeyOptions("/stepup/options", project: project, session: ada.sessionJwt)
            #expect(options.allowed == [Base64URL.encode(adasKey)])
            let assertion = try adas.assert(challenge: options.challenge, credentialID: adasKey)
            let verified = try await client.passkeys(
                .post, "/stepup/verify", project: project, body: assertion.json, session: ada.sessionJwt)
            #expect(verified.status == .ok)
            let stepped = try verified.decode(AuthResponse.self)
            #expect(stepped.refreshToken == nil)
            let token = try await Self.claims(stepped.sessionJwt, client: client, project: project)
            #expect(token.amr == ["otp", "email", "hwk", "user"] && token.acr == "mfa")
        }
    }

    @Test(
        "Registration refuses a wrong relying-party id, a wrong origin and an unissued challenge; nothing is stored",
        arguments: TestEngine.available)
    func registrationRefusals(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            let ada = try await client.signIn("ada@example.com", node: node)
            func refusal(_ authenticator: inout SoftwareAuthenticator, challenge: [UInt8]? = nil) async throws
                -> (HTTPResponse.Status, String?)
            {
                let options = try await client.passkeyOptions(
                    "/registration/options", project: project, session: ada.sessionJwt)
                let registration = authenticator.register(
                    challenge: challenge ?? options.challenge, userHandle: options.userHandle)
                let response = try await client.passkeys(
                    .post, "/registration/verify", project: project, body: registration.json, session: ada.sessionJwt)
                return (response.status, try? response.problem().code)
            }
            var otherRP = SoftwareAuthenticator(rpID: "evil.example.net", origin: "https://example.com")
            #expect(try await refusal(&otherRP) == (.forbidden, "forbidden"))
            var otherOrigin = SoftwareAuthenticator(origin: "https://evil.example.net")
            #expect(try await refusal(&otherOrigin) == (.forbidden, "forbidden"))
            var unissued = SoftwareAuthenticator()
            #expect(
                try await refusal(&unissued, challenge: Array(repeating: 3, count: 32))
                    == (.notFound, "challenge_not_found"))
            let listed = try await client.passkeys(.get, project: project, session: ada.sessionJwt)
            #expect(try listed.decode(Page<PasskeyJSON>.self).items.isEmpty)
        }
    }

    @Test(
        "The user and the backend list, rename and delete passkeys; a backend registers one for a user id; unknown ones are 404",
        arguments: TestEngine.available)
    func manage(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            let ada = try await client.signIn("ada@example.com", node: node)
            var phone = SoftwareAuthenticator()
            _ = try await client.registerPasskey(&phone, project: project, session: ada.sessionJwt)

            let user = "/v1/users/\(ada.user.id)/passkeys"
            let options = try await client.send(.post, "\(user)/registration/options", key: node.apiKey)
            #expect(options.status == .ok)
            let created = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: options.body)) as? [String: Any])
            #expect((created["excludeCredentials"] as? [Any])?.count == 1)
            var laptop = SoftwareAuthenticator()
            let challenge = try #require(created["challenge"] as? String)
            var registration = laptop.register(
                challenge: try #require(Base64URL.decode(challenge)),
                userHandle: Data(ada.user.id.utf8)
            ).json
            registration["friendlyName"] = "Laptop"
            let verified = try await client.send(
                .post, "\(user)/registration/verify", key: node.apiKey,
                json: String(decoding: try JSONSerialization.data(withJSONObject: registration), as: UTF8.self))
            #expect(verified.status == .ok)
            let laptopKey = try verified.decode(PasskeyJSON.self)
            #expect(laptopKey.friendlyName == "Laptop" && laptopKey.userId == ada.user.id)

            let listed = try await client.send(.get, user, key: node.apiKey).decode(Page<PasskeyJSON>.self)
            #expect(listed.items.map(\.friendlyName).sorted() == ["Laptop", "Passkey"])
            let phoneKey = try #require(listed.items.first { $0.friendlyName == "Passkey" })
            let renamed = try await client.passkeys(
                .patch, "/\(phoneKey.id)", project: project, body: ["friendlyName": " Phone "], session: ada.sessionJwt)
            #expect(try renamed.decode(PasskeyJSON.self).friendlyName == "Phone")
            let backendRenamed = try await client.send(
                .patch, "\(user)/\(laptopKey.id)", key: node.apiKey, json: #"{"friendlyName":"Work laptop"}"#)
            #expect(try backendRenamed.decode(PasskeyJSON.self).friendlyName == "Work laptop")

            let deleted = try await client.passkeys(
                .delete, "/\(phoneKey.id)", project: project, session: ada.sessionJwt)
            #expect(deleted.status == .noContent)
            let again = try await client.passkeys(.delete, "/\(phoneKey.id)", project: project, session: ada.sessionJwt)
            #expect(try again.status == .notFound && again.problem().code == "factor_not_found")
            #expect(try await client.send(.delete, "\(user)/\(laptopKey.id)", key: node.apiKey).status == .noContent)
            #expect(try await client.send(.get, user, key: node.apiKey).decode(Page<PasskeyJSON>.self).items.isEmpty)

            let unknown = try await client.send(.get, "/v1/users/usr_nobody/passkeys", key: node.apiKey)
            #expect(try unknown.status == .notFound && unknown.problem().code == "user_not_found")
            let noSession = try await client.passkeys(.get, project: project)
            #expect(try noSession.status == .unauthorized && noSession.problem().code == "invalid_session")
        }
    }

    @Test(
        "The .well-known app files name the apps of the projects whose relying-party id is the host; other hosts get 404",
        arguments: TestEngine.available)
    func appAssociation(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let certificate = Array(UInt8(0)..<32)
        let change = try ProjectSettingsChange(
            PasskeyProjectSettingsTests.change.merging([
                .passkeyOrigins: "https://example.com, android:apk-key-hash:\(Base64URL.encode(certificate))",
                .passkeyAppleAppIds: "ABCDE12345.com.example.app, ABCDE12345.com.example.app",
                .passkeyAndroidPackages: "com.example.app",
            ]) { $1 })
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        for (setting, value) in [(ProjectSettingsChange.Setting.passkeyAppleAppIds, "com.example.app")] + [
            (.passkeyAndroidPackages, "example"), (.passkeyOrigins, "https://example.com"),
        ] {
            let refused = try ProjectSettingsChange([setting: value])
            await #expect(throws: ConfigurationError.self) {
                _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { refused.apply(to: &$0) }
            }
        }
        try await node.run { client in
            func get(_ path: String, host: String) async throws -> (TestResponse, Any?) {
                let response = try await client.send(
                    .get, "/.well-known/\(path)", key: nil, headers: [try #require(HTTPField.Name("Host")): host])
                return (response, try? JSONSerialization.jsonObject(with: Data(buffer: response.body)))
            }
            let (apple, appleJSON) = try await get("apple-app-site-association", host: "EXAMPLE.com:8443")
            #expect(apple.status == .ok && apple.headers[.contentType] == "application/json")
            let webcredentials = (appleJSON as? [String: Any])?["webcredentials"] as? [String: Any]
            #expect(webcredentials?["apps"] as? [String] == ["ABCDE12345.com.example.app"])

            let (android, androidJSON) = try await get("assetlinks.json", host: "example.com")
            #expect(android.status == .ok && android.headers[.contentType] == "application/json")
            let statement = try #require((androidJSON as? [[String: Any]])?.first)
            #expect(statement["relation"] as? [String] == ["delegate_permission/common.get_login_creds"])
            let target = try #require(statement["target"] as? [String: Any])
            #expect(target["namespace"] as? String == "android_app")
            #expect(target["package_name"] as? String == "com.example.app")
            #expect(
                target["sha256_cert_fingerprints"] as? [String]
                    == [certificate.map { String(format: "%02X", $0) }.joined(separator: ":")])

            for path in ["apple-app-site-association", "assetlinks.json"] {
                let (elsewhere, _) = try await get(path, host: "login.example.com")
                #expect(try elsewhere.status == .notFound && elsewhere.problem().code == "not_found")
            }
        }
    }

    @Test(
        "Passkey options and answers take from the client's bucket: past it, 429 rate_limited",
        arguments: TestEngine.available)
    func limitedPerClient(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine) { configuration in
            configuration.rateLimits.perClientAddress = RateLimitPolicy(capacity: 2, period: 3600)
        }
        let project = try await Self.passkeysOn(node)
        try await node.run { client in
            for _ in 1...2 {
                let options = try await client.passkeys(.post, "/authentication/options", project: project, body: [:])
                #expect(options.status == .ok)
            }
            for path in ["/authentication/options", "/authentication/verify", "/stepup/options"] {
                let limited = try await client.passkeys(.post, path, project: project, body: [:])
                #expect(try limited.status == .tooManyRequests && limited.problem().code == "rate_limited")
            }
        }
    }
}
