import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// A WebAuthn start's answer as Descope's clients read it.
struct DescopeWebAuthnStart {
    var transactionId: String
    /// The standard JSON options, taken out of the `options` string's `publicKey`.
    var publicKey: [String: Any]
    var create: Bool

    init(_ response: TestResponse) throws {
        #expect(response.status == .ok)
        let body = try response.json()
        transactionId = try #require(body["transactionId"] as? String)
        create = try #require(body["create"] as? Bool)
        let options = try #require(body["options"] as? String)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(options.utf8)) as? [String: Any])
        publicKey = try #require(root["publicKey"] as? [String: Any])
    }

    var challenge: [UInt8] {
        get throws {
            let text = try #require(publicKey["challenge"] as? String)
            return try #require(Base64URL.decode(text))
        }
    }

    var userHandle: Data {
        get throws {
            let user = try #require(publicKey["user"] as? [String: Any])
            let id = try #require(user["id"] as? String)
            return Data(try #require(Base64URL.decode(id)))
        }
    }

    var allowCredentials: [String] {
        ((publicKey["allowCredentials"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
    }
}

extension TestClientProtocol {
    /// A WebAuthn finish as python-sdk and descope-swift send it: the credential's JSON as a string in `response`.
    func descopeFinish(_ path: String, bearer: String, transactionId: String, credential: [String: Any])
        async throws -> TestResponse
    {
        let response = String(decoding: try JSONSerialization.data(withJSONObject: credential), as: UTF8.self)
        let body = try JSONSerialization.data(withJSONObject: ["transactionId": transactionId, "response": response])
        return try await descope(path, bearer: bearer, json: String(decoding: body, as: UTF8.self))
    }
}

@Suite("The Descope face's WebAuthn")
struct DescopeWebAuthnTests {
    static let email = "grace@example.com"
    static let origin = "https://example.com"

    /// A node whose project has the test relying party on (UV required).
    static func node(_ engine: TestEngine) async throws -> (TestNode, Project) {
        let node = try await TestNode.make(engine)
        let change = try ProjectSettingsChange(PasskeyProjectSettingsTests.change)
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        return (node, try await node.verity.admin.project(id: node.project.id))
    }

    /// The claims of a session JWT.
    static func claims(_ jwt: String) throws -> [String: Any] {
        let payload = try #require(jwt.split(separator: ".").dropFirst().first)
        let bytes = try #require(Base64URL.decode(String(payload)))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// Signs `loginId` up by passkey as python-sdk's `webauthn.sign_up_start` and `sign_up_finish` do; answers the
    /// finish's body and the credential made.
    static func signUp(
        _ loginId: String, authenticator: inout SoftwareAuthenticator, project: Project,
        client: some TestClientProtocol
    ) async throws -> (body: [String: Any], credentialID: Data) {
        let start = try DescopeWebAuthnStart(
            try await client.descope(
                "/v1/auth/webauthn/signup/start", bearer: project.id,
                json: #"{"user":{"loginId":"\#(loginId)","name":"Grace"},"origin":"\#(origin)"}"#))
        #expect(start.create)
        let made = authenticator.register(challenge: try start.challenge, userHandle: try start.userHandle)
        let finish = try await client.descopeFinish(
            "/v1/auth/webauthn/signup/finish", bearer: project.id, transactionId: start.transactionId,
            credential: made.json)
        #expect(finish.status == .ok)
        return (try finish.json(), made.credentialID)
    }

    @Test(
        "signup/start and finish create the user with the passkey and sign them in; the finish is single use",
        arguments: TestEngine.available)
    func signUp(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        try await node.run { client in
            var authenticator = SoftwareAuthenticator()
            let start = try DescopeWebAuthnStart(
                try await client.descope(
                    "/v1/auth/webauthn/signup/start", bearer: project.id,
                    json: #"{"user":{"loginId":"\#(Self.email)","name":"Grace"},"origin":"\#(Self.origin)"}"#))
            #expect(start.create)
            #expect((start.publicKey["rp"] as? [String: Any])?["id"] as? String == "example.com")
            #expect((start.publicKey["user"] as? [String: Any])?["name"] as? String == Self.email)
            #expect((start.publicKey["user"] as? [String: Any])?["displayName"] as? String == "Grace")
            #expect(try start.transactionId == Base64URL.encode(start.challenge))
            // Nobody is written before the answer.
            #expect(try await node.verity.users.list(loginId: Self.email, in: project).items.isEmpty)

            let made = authenticator.register(challenge: try start.challenge, userHandle: try start.userHandle)
            let finish = try await client.descopeFinish(
                "/v1/auth/webauthn/signup/finish", bearer: project.id, transactionId: start.transactionId,
                credential: made.json)
            #expect(finish.status == .ok)
            let body = try finish.json()
            #expect(body["firstSeen"] as? Bool == true)
            #expect(body["refreshJwt"] is String)
            let user = try #require(body["user"] as? [String: Any])
            #expect(user["loginIds"] as? [String] == [Self.email])
            let userId = try #require(user["userId"] as? String)
            #expect(try start.userHandle == Data(userId.utf8))
            let claims = try Self.claims(try #require(body["sessionJwt"] as? String))
            #expect(claims["sub"] as? String == userId)
            #expect(claims["amr"] as? [String] == ["hwk", "user"])
            let stored = try await node.verity.passkeys.passkeys(userId: userId, in: project)
            #expect(stored.map(\.credential.credentialID) == [made.credentialID])

            // The same finish again: its challenge is spent.
            let again = try await client.descopeFinish(
                "/v1/auth/webauthn/signup/finish", bearer: project.id, transactionId: start.transactionId,
                credential: made.json)
            #expect(again.status == .notFound)
            #expect(try again.descopeError() == "E011003")
            // The login id is taken now: a second sign-up is refused before any credential is made.
            let taken = try await client.descope(
                "/v1/auth/webauthn/signup/start", bearer: project.id, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(taken.status == .badRequest)
            #expect(try taken.descopeError() == "E062107")
        }
    }

    @Test(
        "A refused sign-up leaves no user: a wrong origin (start and answer), another transaction, a missing UV",
        arguments: TestEngine.available)
    func refusedSignUp(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        try await node.run { client in
            let evil = try await client.descope(
                "/v1/auth/webauthn/signup/start", bearer: project.id,
                json: #"{"user":{"loginId":"\#(Self.email)"},"origin":"https://evil.example"}"#)
            #expect(evil.status == .forbidden)
            #expect(try evil.descopeError() == "E011003")

            func start() async throws -> DescopeWebAuthnStart {
                try DescopeWebAuthnStart(
                    try await client.descope(
                        "/v1/auth/webauthn/signup/start", bearer: project.id,
                        json: #"{"loginId":"\#(Self.email)"}"#))
            }
            var noUV = SoftwareAuthenticator()
            noUV.userVerified = false
            let other = try await start()
            let cases: [(String, SoftwareAuthenticator, String?, HTTPResponse.Status)] = [
                ("wrong origin", SoftwareAuthenticator(origin: "https://evil.example"), nil, .forbidden),
                ("missing UV", noUV, nil, .forbidden),
                ("another transaction", SoftwareAuthenticator(), other.transactionId, .notFound),
            ]
            for (name, var authenticator, transaction, status) in cases {
                let started = try await start()
                let made = authenticator.register(
                    challenge: try started.challenge, userHandle: try started.userHandle)
                let finish = try await client.descopeFinish(
                    "/v1/auth/webauthn/signup/finish", bearer: project.id,
                    transactionId: transaction ?? started.transactionId, credential: made.json)
                #expect(finish.status == status, "\(name)")
                #expect(try finish.descopeError() == "E011003", "\(name)")
                #expect(
                    try await node.verity.users.list(loginId: Self.email, in: project).items.isEmpty, "\(name)")
            }
        }
    }

    @Test(
        "update/start and finish add a passkey to the refresh JWT's user, for their own login id only",
        arguments: TestEngine.available)
    func update(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        let pid = project.id
        try await node.run { client in
            let signedIn = try await DescopeFaceTests.signIn(Self.email, method: "email", node: node, client: client)
            let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            let userId = try #require((signedIn["user"] as? [String: Any])?["userId"] as? String)

            let foreign = try await client.descope(
                "/v1/auth/webauthn/update/start", bearer: "\(pid):\(refreshJwt)",
                json: #"{"loginId":"someone@example.com","origin":"\#(Self.origin)"}"#)
            #expect(foreign.status == .badRequest)
            #expect(try foreign.descopeError() == "E011003")
            let anonymous = try await client.descope(
                "/v1/auth/webauthn/update/start", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(anonymous.status == .unauthorized)
            #expect(try anonymous.descopeError() == "E011002")

            var authenticator = SoftwareAuthenticator()
            let start = try DescopeWebAuthnStart(
                try await client.descope(
                    "/v1/auth/webauthn/update/start", bearer: "\(pid):\(refreshJwt)",
                    json: #"{"loginId":"\#(Self.email)","origin":"\#(Self.origin)"}"#))
            #expect(try start.userHandle == Data(userId.utf8))
            let made = authenticator.register(challenge: try start.challenge, userHandle: try start.userHandle)
            let finish = try await client.descopeFinish(
                "/v1/auth/webauthn/update/finish", bearer: pid, transactionId: start.transactionId,
                credential: made.json)
            #expect(finish.status == .ok)
            #expect(try finish.json().isEmpty)
            #expect(
                try await node.verity.passkeys.passkeys(userId: userId, in: project).map(\.credential.credentialID)
                    == [made.credentialID])

            // A sign-up's challenge does not finish an update (it names no existing user), nor the reverse.
            let signUp = try DescopeWebAuthnStart(
                try await client.descope(
                    "/v1/auth/webauthn/signup/start", bearer: pid, json: #"{"loginId":"new@example.com"}"#))
            let crossed = authenticator.register(
                challenge: try signUp.challenge, userHandle: try signUp.userHandle)
            let refused = try await client.descopeFinish(
                "/v1/auth/webauthn/update/finish", bearer: pid, transactionId: signUp.transactionId,
                credential: crossed.json)
            #expect(refused.status == .notFound)
            #expect(try refused.descopeError() == "E011003")
            #expect(try await node.verity.users.list(loginId: "new@example.com", in: project).items.isEmpty)
        }
    }

    /// Signs ``email`` up by `signup-in/start` (which must answer `create`) and `signup/finish`, with `loginOptions`;
    /// answers the finish and the credential made.
    static func signUpOrIn(
        loginOptions: String = "{}", bearer: String, authenticator: inout SoftwareAuthenticator,
        client: some TestClientProtocol
    ) async throws -> (TestResponse, SoftwareAuthenticator.Registration) {
        let start = try DescopeWebAuthnStart(
            try await client.descope(
                "/v1/auth/webauthn/signup-in/start", bearer: bearer,
                json: #"{"loginId":"\#(email)","origin":"\#(origin)","loginOptions":\#(loginOptions)}"#))
        #expect(start.create)
        let made = authenticator.register(challenge: try start.challenge, userHandle: try start.userHandle)
        let finish = try await client.descopeFinish(
            "/v1/auth/webauthn/signup/finish", bearer: bearer, transactionId: start.transactionId,
            credential: made.json)
        return (finish, made)
    }

    /// Starts a sign-in of `loginId` (`signin/start`, or `signup-in/start` when `path` says so) and answers it with
    /// `authenticator`'s credential `credentialID` (the allowed one when nil).
    static func signIn(
        _ loginId: String, path: String = "signin", bearer: String, loginOptions: String = "{}",
        authenticator: inout SoftwareAuthenticator, credentialID: Data? = nil, client: some TestClientProtocol
    ) async throws -> (start: DescopeWebAuthnStart, assertion: SoftwareAuthenticator.Assertion) {
        let start = try DescopeWebAuthnStart(
            try await client.descope(
                "/v1/auth/webauthn/\(path)/start", bearer: bearer,
                json: #"{"loginId":"\#(loginId)","origin":"\#(origin)","loginOptions":\#(loginOptions)}"#))
        #expect(!start.create)
        let allowed = try #require(start.allowCredentials.first.flatMap(Base64URL.decode))
        let assertion = try authenticator.assert(
            challenge: try start.challenge, credentialID: credentialID ?? Data(allowed))
        return (start, assertion)
    }

    @Test(
        "loginOptions.customClaims on a passkey start ride in its session under nsec, a step-up's join them; a name the server sets is E011003",
        arguments: TestEngine.available)
    func customClaims(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        let pid = project.id
        try await node.run { client in
            var authenticator = SoftwareAuthenticator()
            // signup-in for a new login id: the sign-up's session carries the claims.
            let (signedUp, _) = try await Self.signUpOrIn(
                loginOptions: #"{"customClaims":{"plan":"trial"}}"#, bearer: pid, authenticator: &authenticator,
                client: client)
            let signUpClaims = try Self.claims(try #require(try signedUp.json()["sessionJwt"] as? String))
            #expect(signUpClaims["nsec"] as? [String: String] == ["plan": "trial"])

            for reserved in [#"{"su":true}"#, #"{"sub":"U1"}"#, #"{"drn":"DSR"}"#] {
                let refused = try await client.descope(
                    "/v1/auth/webauthn/signin/start", bearer: pid,
                    json: #"{"loginId":"\#(Self.email)","loginOptions":{"customClaims":\#(reserved)}}"#)
                #expect(refused.status == .badRequest, "\(reserved)")
                #expect(try refused.descopeError() == "E011003", "\(reserved)")
            }

            let (start, assertion) = try await Self.signIn(
                Self.email, bearer: pid, loginOptions: #"{"customClaims":{"plan":"pro","seats":3}}"#,
                authenticator: &authenticator, client: client)
            let signedIn = try await client.descopeFinish(
                "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: start.transactionId,
                credential: assertion.json)
            #expect(signedIn.status == .ok)
            let body = try signedIn.json()
            let refreshJwt = try #require(body["refreshJwt"] as? String)
            for token in [try #require(body["sessionJwt"] as? String), refreshJwt] {
                let nsec = try #require(try Self.claims(token)["nsec"] as? [String: Any])
                #expect(nsec["plan"] as? String == "pro" && nsec["seats"] as? Int == 3)
            }

            // A step-up's claims join the session's; a name the server sets is refused before any challenge.
            let reservedStepUp = try await client.descope(
                "/v1/auth/webauthn/signin/start", bearer: "\(pid):\(refreshJwt)",
                json: #"{"loginId":"\#(Self.email)","loginOptions":{"stepup":true,"customClaims":{"su":false}}}"#)
            #expect(try reservedStepUp.descopeError() == "E011003")
            let (stepUp, stepUpAssertion) = try await Self.signIn(
                Self.email, bearer: "\(pid):\(refreshJwt)",
                loginOptions: #"{"stepup":true,"customClaims":{"level":"high"}}"#, authenticator: &authenticator,
                client: client)
            let stepped = try await client.descopeFinish(
                "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: stepUp.transactionId,
                credential: stepUpAssertion.json)
            let steppedClaims = try Self.claims(try #require(try stepped.json()["sessionJwt"] as? String))
            #expect(steppedClaims["su"] as? Bool == true)
            let nsec = try #require(steppedClaims["nsec"] as? [String: Any])
            #expect(
                nsec["plan"] as? String == "pro" && nsec["seats"] as? Int == 3 && nsec["level"] as? String == "high")

            // The claims were that session's: a sign-in without them has none.
            let (plain, plainAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &authenticator, client: client)
            let later = try await client.descopeFinish(
                "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: plain.transactionId,
                credential: plainAssertion.json)
            #expect(try Self.claims(try #require(try later.json()["sessionJwt"] as? String))["nsec"] == nil)
        }
    }

    @Test(
        "signin and signup-in (create true, then false) sign in by passkey; stepup and mfa step the session up",
        arguments: TestEngine.available)
    func signInAndStepUp(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        let pid = project.id
        try await node.run { client in
            var authenticator = SoftwareAuthenticator()
            // signup-in for a new login id: create, finished by signup/finish.
            let (signedUp, made) = try await Self.signUpOrIn(bearer: pid, authenticator: &authenticator, client: client)
            let userId = try #require((try signedUp.json()["user"] as? [String: Any])?["userId"] as? String)

            // signup-in again: the user has a passkey, so it is a sign-in, finished by signin/finish.
            let (again, assertion) = try await Self.signIn(
                Self.email, path: "signup-in", bearer: pid, authenticator: &authenticator, client: client)
            #expect(again.allowCredentials == [Base64URL.encode(made.credentialID)])
            let signedIn = try await client.descopeFinish(
                "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: again.transactionId,
                credential: assertion.json)
            #expect(signedIn.status == .ok)
            let body = try signedIn.json()
            #expect(body["firstSeen"] as? Bool == false)
            #expect((body["user"] as? [String: Any])?["userId"] as? String == userId)
            let claims = try Self.claims(try #require(body["sessionJwt"] as? String))
            #expect(claims["amr"] as? [String] == ["hwk", "user"])
            let refreshJwt = try #require(body["refreshJwt"] as? String)

            // signin/start as python-sdk sends it; an unknown login id is E062108.
            let (plain, plainAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &authenticator, client: client)
            let plainFinish = try await client.descopeFinish(
                "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: plain.transactionId,
                credential: plainAssertion.json)
            #expect(plainFinish.status == .ok)
            let unknown = try await client.descope(
                "/v1/auth/webauthn/signin/start", bearer: pid, json: #"{"loginId":"nobody@example.com"}"#)
            #expect(try unknown.descopeError() == "E062108")

            // A step-up needs the refresh JWT; with it, the finish steps that session up (`su`).
            let anonymous = try await client.descope(
                "/v1/auth/webauthn/signin/start", bearer: pid,
                json: #"{"loginId":"\#(Self.email)","loginOptions":{"stepup":true}}"#)
            #expect(anonymous.status == .badRequest)
            #expect(try anonymous.descopeError() == "E011003")
            for options in [#"{"stepup":true}"#, #"{"mfa":true}"#] {
                let (stepUp, stepUpAssertion) = try await Self.signIn(
                    Self.email, bearer: "\(pid):\(refreshJwt)", loginOptions: options, authenticator: &authenticator,
                    client: client)
                let finish = try await client.descopeFinish(
                    "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: stepUp.transactionId,
                    credential: stepUpAssertion.json)
                #expect(finish.status == .ok, "\(options)")
                let stepped = try Self.claims(try #require(try finish.json()["sessionJwt"] as? String))
                #expect(stepped["su"] as? Bool == true, "\(options)")
                #expect(stepped["sid"] as? String == claims["sid"] as? String, "\(options)")
                // One more refresh JWT of the same session; the one the client held stays valid.
                let more = try #require(try finish.json()["refreshJwt"] as? String, "\(options)")
                #expect(more != refreshJwt)
                for token in [more, refreshJwt] {
                    let me = try await client.descope("/v1/auth/me", method: .get, bearer: "\(pid):\(token)")
                    #expect(me.status == .ok, "\(options)")
                }
            }
        }
    }

    @Test(
        "signin/finish refuses, each in Descope's shape and code, and signs nobody in",
        arguments: TestEngine.available)
    func refusedSignIn(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        let pid = project.id
        try await node.run { client in
            var ada = SoftwareAuthenticator()
            var eve = SoftwareAuthenticator()
            let adaSession = try await Self.signUp(Self.email, authenticator: &ada, project: project, client: client)
            let adaRefresh = try #require(adaSession.body["refreshJwt"] as? String)
            let (_, eveCredential) = try await Self.signUp(
                "eve@example.com", authenticator: &eve, project: project, client: client)
            let eveSession = try await Self.signUp(
                "mallory@example.com", authenticator: &eve, project: project, client: client)
            let eveJwt = try #require(eveSession.body["sessionJwt"] as? String)
            let eveSid = try #require(try Self.claims(eveJwt)["sid"] as? String)

            func finish(_ transactionId: String, _ assertion: SoftwareAuthenticator.Assertion) async throws
                -> TestResponse
            {
                try await client.descopeFinish(
                    "/v1/auth/webauthn/signin/finish", bearer: pid, transactionId: transactionId,
                    credential: assertion.json)
            }
            func expectRefused(_ response: TestResponse, _ status: HTTPResponse.Status, _ name: String) throws {
                #expect(response.status == status, "\(name)")
                #expect(try response.descopeError() == "E011003", "\(name)")
                #expect(try response.json()["sessionJwt"] == nil, "\(name)")
            }

            // A challenge the server did not issue.
            let forged = [UInt8](repeating: 7, count: 32)
            let (allowed, _) = try await Self.signIn(Self.email, bearer: pid, authenticator: &ada, client: client)
            let credential = try #require(allowed.allowCredentials.first.flatMap(Base64URL.decode))
            let unissued = try ada.assert(challenge: forged, credentialID: Data(credential))
            try expectRefused(try await finish(Base64URL.encode(forged), unissued), .notFound, "unissued")

            // A replayed assertion.
            let (start, assertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            #expect(try await finish(start.transactionId, assertion).status == .ok)
            try expectRefused(try await finish(start.transactionId, assertion), .notFound, "replay")

            // A flipped signature bit.
            var (flipStart, flipped) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            flipped.signature[flipped.signature.count - 1] ^= 0x01
            try expectRefused(try await finish(flipStart.transactionId, flipped), .badRequest, "flipped bit")

            // Another user's credential, answering Ada's sign-in.
            let (other, eveAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &eve, credentialID: eveCredential, client: client)
            try expectRefused(try await finish(other.transactionId, eveAssertion), .forbidden, "another user's")

            // A wrong origin.
            ada.origin = "https://evil.example"
            let (phished, phishedAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            try expectRefused(try await finish(phished.transactionId, phishedAssertion), .forbidden, "origin")
            ada.origin = Self.origin

            // A counter set back.
            ada.counter = 0
            let (cloned, clonedAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            try expectRefused(try await finish(cloned.transactionId, clonedAssertion), .forbidden, "counter")
            ada.counter = 100

            // No UV where the project requires it.
            ada.userVerified = false
            let (unverified, unverifiedAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            try expectRefused(
                try await finish(unverified.transactionId, unverifiedAssertion), .forbidden, "missing UV")
            ada.userVerified = true

            // Ada's step-up with its transaction pointed at another user's session: that session is not stepped up.
            let (stepUp, stepUpAssertion) = try await Self.signIn(
                Self.email, bearer: "\(pid):\(adaRefresh)", loginOptions: #"{"stepup":true}"#, authenticator: &ada,
                client: client)
            let redirected = "\(try Base64URL.encode(stepUp.challenge)).\(eveSid)"
            try expectRefused(try await finish(redirected, stepUpAssertion), .notFound, "another session")
            // Ada can still sign in: none of the refusals changed her passkey.
            let (last, lastAssertion) = try await Self.signIn(
                Self.email, bearer: pid, authenticator: &ada, client: client)
            #expect(try await finish(last.transactionId, lastAssertion).status == .ok)
        }
    }

    @Test(
        "Bad input is 400 / E011003 and writes nothing; a user without a passkey is E062107 on signup-in and signup",
        arguments: TestEngine.available)
    func badInput(engine: TestEngine) async throws {
        let (node, project) = try await Self.node(engine)
        let pid = project.id
        try await node.run { client in
            let start = try DescopeWebAuthnStart(
                try await client.descope(
                    "/v1/auth/webauthn/signup/start", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#))
            let bodies = [
                #"{"loginId":""}"#, #"{"loginId":"not a login id"}"#, #"{"user":{}}"#,
                #"{"transactionId":"\#(start.transactionId)"}"#,
                #"{"transactionId":"\#(start.transactionId)","response":"{not json"}"#,
                #"{"transactionId":"\#(start.transactionId)","response":42}"#,
                #"{"transactionId":"\#(start.transactionId)","response":"{\"id\":\"x\",\"rawId\":\"x\",\"type\":\"public-key\",\"response\":{\"clientDataJSON\":\"!!\"}}"}"#,
                #"{"response":"{}"}"#, "[]",
            ]
            for path in ["signup/start", "signup/finish", "signin/start", "signin/finish", "update/finish"] {
                for body in bodies {
                    let response = try await client.descope("/v1/auth/webauthn/\(path)", bearer: pid, json: body)
                    #expect(response.status.code / 100 == 4, "\(path) \(body)")
                    #expect(try response.descopeError().hasPrefix("E0"), "\(path) \(body)")
                }
            }
            #expect(try await node.verity.users.list(loginId: Self.email, in: project).items.isEmpty)

            // A user who signed in by code and has no passkey: neither a sign-up nor a sign-up-or-in makes one.
            _ = try await DescopeFaceTests.signIn(Self.email, method: "email", node: node, client: client)
            for path in ["signup/start", "signup-in/start"] {
                let refused = try await client.descope(
                    "/v1/auth/webauthn/\(path)", bearer: pid, json: #"{"loginId":"\#(Self.email)"}"#)
                #expect(refused.status == .badRequest, "\(path)")
                #expect(try refused.descopeError() == "E062107", "\(path)")
            }
        }
    }
}
