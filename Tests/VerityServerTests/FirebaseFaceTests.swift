import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

/// Requests as the Firebase SDKs send them to an emulator host.
extension TestClientProtocol {
    func firebase(
        _ path: String, key: String, json: String? = nil, form: String? = nil, headers extra: HTTPFields = [:]
    )
        async throws -> TestResponse
    {
        var headers = extra
        headers[.contentType] = form == nil ? "application/json" : "application/x-www-form-urlencoded"
        let body = (json ?? form).map { ByteBuffer(string: $0) }
        return try await execute(uri: "/\(path)?key=\(key)", method: .post, headers: headers, body: body)
    }
}

extension TestResponse {
    /// The `error.message` of Google's error envelope, after checking the envelope's shape.
    func googleError() throws -> String {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        let error = try #require(root["error"] as? [String: Any])
        #expect(error["code"] as? Int == Int(status.code))
        let message = try #require(error["message"] as? String)
        let errors = try #require(error["errors"] as? [[String: Any]])
        #expect(errors.first?["message"] as? String == message)
        #expect(errors.first?["domain"] as? String == "global")
        #expect(error["status"] is String)
        return message
    }
}

@Suite("The Firebase Auth face")
struct FirebaseFaceTests {
    static let v3 = "www.googleapis.com/identitytoolkit/v3/relyingparty"
    static let v1 = "identitytoolkit.googleapis.com/v1"
    static let token = "securetoken.googleapis.com/v1/token"
    static let phone = "+14155550100"

    static func named(_ node: TestNode) async throws -> FirebaseProject {
        try await node.verity.firebaseProjects.name(projectId: node.project.id, firebaseProjectId: "acme-app")
    }

    /// Sends a code and signs in with it, by the iOS SDK's v3 names or the v1 ones.
    static func signIn(
        _ phone: String, key: String, node: TestNode, client: some TestClientProtocol, legacy: Bool = true,
        count: Int = 1
    ) async throws -> [String: Any] {
        let send = try await client.firebase(
            legacy ? "\(v3)/sendVerificationCode" : "\(v1)/accounts:sendVerificationCode", key: key,
            json: #"{"phoneNumber":"\#(phone)","clientType":"CLIENT_TYPE_IOS"}"#)
        #expect(send.status == .ok)
        let sessionInfo = try #require(try send.json()["sessionInfo"] as? String)
        let code = try await node.sender.code(to: phone, count: count)
        let verified = try await client.firebase(
            legacy ? "\(v3)/verifyPhoneNumber" : "\(v1)/accounts:signInWithPhoneNumber", key: key,
            json: #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)","operation":"SIGN_UP_OR_IN"}"#)
        #expect(verified.status == .ok)
        return try verified.json()
    }

    @Test(
        "Phone sign-in as the iOS SDK sends it: code, ID token with Firebase's claims, account info, refresh, again",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await Self.named(node)
        try await node.run { client in
            let first = try await Self.signIn(Self.phone, key: link.apiKey, node: node, client: client)
            #expect(first["isNewUser"] as? Bool == true)
            #expect(first["phoneNumber"] as? String == Self.phone)
            #expect(first["expiresIn"] as? String == "\(node.project.settings.sessionLifetime)")
            let localId = try #require(first["localId"] as? String)
            let idToken = try #require(first["idToken"] as? String)
            let refreshToken = try #require(first["refreshToken"] as? String)

            let claims = try await SessionAPITests.independentlyVerified(idToken, client: client, project: node.project)
            #expect(claims["iss"] as? String == "https://securetoken.google.com/acme-app")
            #expect(claims["aud"] as? String == "acme-app")
            #expect(claims["sub"] as? String == localId)
            #expect(claims["user_id"] as? String == localId)
            #expect(claims["phone_number"] as? String == Self.phone)
            let firebase = try #require(claims["firebase"] as? [String: Any])
            #expect(firebase["sign_in_provider"] as? String == "phone")
            #expect((firebase["identities"] as? [String: [String]])?["phone"] == [Self.phone])
            for claim in ["iat", "exp", "auth_time"] { #expect(claims[claim] is Int, "\(claim)") }

            let account = try await client.firebase(
                "\(Self.v3)/getAccountInfo", key: link.apiKey, json: #"{"idToken":"\#(idToken)"}"#)
            let user = try #require((try account.json()["users"] as? [[String: Any]])?.first)
            #expect(user["localId"] as? String == localId)
            #expect(user["phoneNumber"] as? String == Self.phone)
            #expect((user["providerUserInfo"] as? [[String: String]])?.first?["providerId"] == "phone")
            #expect(user["createdAt"] is String)

            let refreshed = try await client.firebase(
                Self.token, key: link.apiKey, json: #"{"grantType":"refresh_token","refreshToken":"\#(refreshToken)"}"#
            ).json()
            #expect(refreshed["user_id"] as? String == localId)
            #expect(refreshed["project_id"] as? String == "acme-app")
            #expect(refreshed["token_type"] as? String == "Bearer")
            #expect(refreshed["access_token"] as? String == refreshed["id_token"] as? String)
            let next = try #require(refreshed["refresh_token"] as? String)
            #expect(next != refreshToken)
            let form = try await client.firebase(
                Self.token, key: link.apiKey, form: "grant_type=refresh_token&refresh_token=\(next)")
            #expect(form.status == .ok)
            let reused = try await client.firebase(
                Self.token, key: link.apiKey, form: "grant_type=refresh_token&refresh_token=\(refreshToken)")
            #expect(try reused.googleError() == "INVALID_REFRESH_TOKEN")

            let again = try await Self.signIn(
                Self.phone, key: link.apiKey, node: node, client: client, legacy: false, count: 2)
            #expect(again["isNewUser"] as? Bool == false)
            #expect(again["localId"] as? String == localId)
            let lookedUp = try await client.firebase(
                "\(Self.v1)/accounts:lookup", key: link.apiKey,
                json: #"{"idToken":"\#(try #require(again["idToken"] as? String))"}"#)
            #expect(lookedUp.status == .ok)
        }
    }

    @Test("Refusals come in Google's error shape with Firebase's messages", arguments: TestEngine.available)
    func errors(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await Self.named(node)
        try await node.run { client in
            let key = link.apiKey
            let unknownKey = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: "AIzaUnknown", json: #"{"phoneNumber":"\#(Self.phone)"}"#)
            #expect(try unknownKey.googleError() == "API key not valid. Please pass a valid API key.")
            let cases: [(String, String, String)] = [
                ("\(Self.v3)/sendVerificationCode", "{}", "MISSING_PHONE_NUMBER"),
                ("\(Self.v3)/sendVerificationCode", #"{"phoneNumber":"12"}"#, "INVALID_PHONE_NUMBER"),
                ("\(Self.v3)/verifyPhoneNumber", #"{"code":"123456"}"#, "MISSING_SESSION_INFO"),
                ("\(Self.v3)/verifyPhoneNumber", #"{"sessionInfo":"ver_x"}"#, "MISSING_CODE"),
                ("\(Self.v3)/verifyPhoneNumber", #"{"sessionInfo":"nope","code":"123456"}"#, "INVALID_SESSION_INFO"),
                ("\(Self.v3)/getAccountInfo", #"{"idToken":"not.a.token"}"#, "INVALID_ID_TOKEN"),
                (Self.token, #"{"grantType":"refresh_token","refreshToken":"vrt_x"}"#, "INVALID_REFRESH_TOKEN"),
                (Self.token, #"{"grantType":"password"}"#, "INVALID_GRANT_TYPE"),
            ]
            for (path, body, message) in cases {
                let refused = try await client.firebase(path, key: key, json: body)
                #expect(refused.status == .badRequest, "\(path) \(body)")
                #expect(try refused.googleError() == message, "\(path) \(body)")
            }
            let notJSON = try await client.firebase("\(Self.v3)/sendVerificationCode", key: key, json: "[1,")
            #expect(notJSON.status == .badRequest)
            #expect(try notJSON.googleError().hasPrefix("INVALID_ARGUMENT"))

            // A wrong code leaves the right one usable; a used sessionInfo signs in no one.
            let send = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: key, json: #"{"phoneNumber":"\#(Self.phone)"}"#)
            let sessionInfo = try #require(try send.json()["sessionInfo"] as? String)
            let code = try await node.sender.code(to: Self.phone)
            let wrong = try await client.firebase(
                "\(Self.v3)/verifyPhoneNumber", key: key,
                json: #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code == "000000" ? "111111" : "000000")"}"#)
            #expect(try wrong.googleError() == "INVALID_CODE")
            let right = try await client.firebase(
                "\(Self.v3)/verifyPhoneNumber", key: key, json: #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
            #expect(right.status == .ok)
            let used = try await client.firebase(
                "\(Self.v3)/verifyPhoneNumber", key: key, json: #"{"sessionInfo":"\#(sessionInfo)","code":"\#(code)"}"#)
            #expect(try used.googleError() == "SESSION_EXPIRED")

            // A disabled user: their sessions end (refresh answers INVALID_REFRESH_TOKEN) and a right code (a test
            // number's, since nothing is sent to a disabled user) answers USER_DISABLED.
            let userId = try #require(try right.json()["localId"] as? String)
            let refreshToken = try #require(try right.json()["refreshToken"] as? String)
            _ = try await node.verity.testNumbers.add(
                CreateTestPhoneNumberRequest(phoneNumber: "+15005550198", code: "246802"), in: node.project)
            _ = try await node.verity.users.update(
                id: userId, UpdateUserRequest(loginIds: ["+15005550198"]), in: node.project)
            _ = try await node.verity.accounts.setDisabled(true, id: userId, in: node.project)
            let ended = try await client.firebase(
                Self.token, key: key, json: #"{"grantType":"refresh_token","refreshToken":"\#(refreshToken)"}"#)
            #expect(try ended.googleError() == "INVALID_REFRESH_TOKEN")
            let again = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: key, json: #"{"phoneNumber":"+15005550198"}"#)
            let againInfo = try #require(try again.json()["sessionInfo"] as? String)
            let disabled = try await client.firebase(
                "\(Self.v3)/verifyPhoneNumber", key: key, json: #"{"sessionInfo":"\#(againInfo)","code":"246802"}"#)
            #expect(try disabled.googleError() == "USER_DISABLED")

            // An ID token past its expiry is TOKEN_EXPIRED; wrong codes past the limit are TOO_MANY_ATTEMPTS_TRY_LATER.
            let fresh = try await Self.signIn("+14155550177", key: key, node: node, client: client)
            node.clock.advance(by: TimeInterval(node.project.settings.sessionLifetime) + 10)
            let expired = try await client.firebase(
                "\(Self.v3)/getAccountInfo", key: key,
                json: #"{"idToken":"\#(try #require(fresh["idToken"] as? String))"}"#)
            #expect(try expired.googleError() == "TOKEN_EXPIRED")
            let guessed = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: key, json: #"{"phoneNumber":"+14155550178"}"#)
            let guessedInfo = try #require(try guessed.json()["sessionInfo"] as? String)
            var messages: [String] = []
            for _ in 0..<7 {
                let attempt = try await client.firebase(
                    "\(Self.v3)/verifyPhoneNumber", key: key,
                    json: #"{"sessionInfo":"\#(guessedInfo)","code":"000001"}"#)
                messages.append(try attempt.googleError())
            }
            #expect(messages.first == "INVALID_CODE")
            #expect(messages.last == "TOO_MANY_ATTEMPTS_TRY_LATER")
        }
    }

    @Test(
        "Concurrent sends for one number give one pending code and one message; a test number gets none",
        arguments: TestEngine.available)
    func reentrancyAndTestNumbers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await Self.named(node)
        _ = try await node.verity.testNumbers.add(
            CreateTestPhoneNumberRequest(phoneNumber: "+15005550199", code: "654321"), in: node.project)
        try await node.run { client in
            let sessions = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        try await client.firebase(
                            "\(Self.v3)/sendVerificationCode", key: link.apiKey,
                            json: #"{"phoneNumber":"\#(Self.phone)"}"#
                        ).json()["sessionInfo"] as? String
                    }
                }
                return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
            }
            #expect(sessions.count == 1)
            try await node.sender.waitForMessages(to: Self.phone)
            try await Task.sleep(for: .milliseconds(200))
            #expect(node.sender.messages(to: Self.phone).count == 1)

            let send = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: link.apiKey, json: #"{"phoneNumber":"+15005550199"}"#)
            let sessionInfo = try #require(try send.json()["sessionInfo"] as? String)
            let signedIn = try await client.firebase(
                "\(Self.v3)/verifyPhoneNumber", key: link.apiKey,
                json: #"{"sessionInfo":"\#(sessionInfo)","code":"654321"}"#)
            #expect(signedIn.status == .ok)
            #expect(node.sender.messages(to: "+15005550199").isEmpty)
        }
    }

    @Test(
        "The admin side takes the project's API key (the emulator's `owner` only when allowed) and manages users",
        arguments: TestEngine.available)
    func admin(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await Self.named(node)
        let (_, otherKey) = try await node.otherProject()
        try await node.run { client in
            let signedIn = try await Self.signIn(Self.phone, key: link.apiKey, node: node, client: client)
            let uid = try #require(signedIn["localId"] as? String)
            let path = "/identitytoolkit.googleapis.com/v1/projects/acme-app/accounts:"
            func admin(_ verb: String, _ json: String, bearer: String) async throws -> TestResponse {
                try await client.send(.post, path + verb, key: bearer, json: json)
            }
            for bearer in ["owner", otherKey, "vk_unknown"] {
                let refused = try await admin("lookup", #"{"localId":["\#(uid)"]}"#, bearer: bearer)
                #expect(refused.status == .unauthorized, "\(bearer.prefix(5))")
            }
            let found = try await admin("lookup", #"{"phoneNumber":["\#(Self.phone)"]}"#, bearer: node.apiKey).json()
            #expect((found["users"] as? [[String: Any]])?.first?["localId"] as? String == uid)
            let missing = try await admin("lookup", #"{"localId":["usr_nobody"]}"#, bearer: node.apiKey).json()
            #expect(missing["users"] == nil)

            let claims = try await admin(
                "update", #"{"localId":"\#(uid)","customAttributes":"{\"tier\":\"gold\"}"}"#, bearer: node.apiKey)
            #expect(claims.status == .ok)
            let user = try await node.verity.users.user(id: uid, in: node.project)
            #expect(user.customClaims == ["tier": .string("gold")])
            let reserved = try await admin(
                "update", #"{"localId":"\#(uid)","customAttributes":"{\"sub\":\"x\"}"}"#, bearer: node.apiKey)
            #expect(try reserved.googleError().hasPrefix("INVALID_CLAIMS"))
            let email = try await admin("update", #"{"localId":"\#(uid)","email":"a@b.c"}"#, bearer: node.apiKey)
            #expect(try email.googleError() == "OPERATION_NOT_ALLOWED")

            let revoked = try await admin("update", #"{"localId":"\#(uid)","validSince":"1"}"#, bearer: node.apiKey)
            #expect(revoked.status == .ok)
            let refresh = try await client.firebase(
                Self.token, key: link.apiKey,
                json:
                    #"{"grantType":"refresh_token","refreshToken":"\#(try #require(signedIn["refreshToken"] as? String))"}"#
            )
            #expect(try refresh.googleError() == "INVALID_REFRESH_TOKEN")

            let listed = try await client.send(
                .get, path + "batchGet?maxResults=10", key: node.apiKey
            ).json()
            #expect((listed["users"] as? [[String: Any]])?.count == 1)
            let deleted = try await admin("delete", #"{"localId":"\#(uid)"}"#, bearer: node.apiKey)
            #expect(deleted.status == .ok)
            let gone = try await admin("delete", #"{"localId":"\#(uid)"}"#, bearer: node.apiKey)
            #expect(try gone.googleError() == "USER_NOT_FOUND")
        }
        let emulator = try await TestNode.make(engine, configure: { $0.firebaseEmulatorAdmin = true })
        let emulatorLink = try await Self.named(emulator)
        _ = try await emulator.verity.admin.updateProject(id: emulator.project.id, name: nil) {
            $0.firebaseEmulatorAdmin = .allNumbers
        }
        // The emulator's admin side answers loopback clients only: over the real HTTP stack, from 127.0.0.1.
        try await emulator.run(.live) { client in
            let owner = try await client.send(
                .post, "/identitytoolkit.googleapis.com/v1/projects/acme-app/accounts:lookup", key: "owner",
                json: #"{"localId":["usr_nobody"]}"#)
            #expect(owner.status == .ok)
            let sent = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: emulatorLink.apiKey, json: #"{"phoneNumber":"\#(Self.phone)"}"#)
            let sessionInfo = try #require(try sent.json()["sessionInfo"] as? String)
            let listed = try await client.send(
                .get, "/emulator/v1/projects/acme-app/verificationCodes", key: nil
            ).json()
            let code = try #require((listed["verificationCodes"] as? [[String: String]])?.first)
            #expect(code["sessionInfo"] == sessionInfo)
            #expect(code["phoneNumber"] == Self.phone)
            #expect(code["code"] == (try await emulator.sender.code(to: Self.phone)))
        }
    }

    @Test(
        "Emulator admin: per-project opt-in, loopback clients only (no proxy), test numbers' codes unless all_numbers",
        arguments: TestEngine.available)
    func emulatorAdminOptIn(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine,
            configure: {
                $0.firebaseEmulatorAdmin = true
                $0.trustedProxies = [IPNetwork("127.0.0.1/32")].compactMap { $0 }
            })
        let link = try await Self.named(node)
        let testNumber = "+16505553434"
        _ = try await node.verity.testNumbers.add(
            CreateTestPhoneNumberRequest(phoneNumber: testNumber, code: "123456"), in: node.project)
        let codes = "/emulator/v1/projects/acme-app/verificationCodes"
        let lookup = "/identitytoolkit.googleapis.com/v1/projects/acme-app/accounts:lookup"
        try await node.run(.live) { client in
            for phone in [Self.phone, testNumber] {
                let sent = try await client.firebase(
                    "\(Self.v3)/sendVerificationCode", key: link.apiKey, json: #"{"phoneNumber":"\#(phone)"}"#)
                #expect(sent.status == .ok)
            }
            func listed(headers: HTTPFields = [:]) async throws -> (HTTPResponse.Status, [String]) {
                let answer = try await client.send(.get, codes, key: nil, headers: headers)
                guard answer.status == .ok else { return (answer.status, []) }
                let list = try answer.json()["verificationCodes"] as? [[String: String]] ?? []
                return (answer.status, list.compactMap { $0["phoneNumber"] })
            }
            func owner(headers: HTTPFields = [:]) async throws -> HTTPResponse.Status {
                try await client.send(.post, lookup, key: "owner", json: #"{"localId":["usr_x"]}"#, headers: headers)
                    .status
            }
            // A project that did not opt in: no codes, and Bearer owner is no credential.
            #expect(try await listed().0 == .notFound)
            #expect(try await owner() == .unauthorized)

            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
                $0.firebaseEmulatorAdmin = .testNumbers
            }
            let testOnly = try await listed()
            #expect(testOnly.0 == .ok)
            #expect(testOnly.1 == [testNumber])
            #expect(try await owner() == .ok)

            // Through a proxy (trusted, so the client is the forwarded address), or with any forwarding header, the
            // client is not this machine.
            for forwarded in ["203.0.113.9", "127.0.0.1"] {
                let headers: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: forwarded]
                #expect(try await listed(headers: headers).0 == .notFound)
                #expect(try await owner(headers: headers) == .unauthorized)
            }

            _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
                $0.firebaseEmulatorAdmin = .allNumbers
            }
            #expect(Set(try await listed().1) == [Self.phone, testNumber])
        }
        // The project's opt-in alone serves nothing while the server's switch is off.
        let off = try await TestNode.make(engine)
        _ = try await Self.named(off)
        _ = try await off.verity.admin.updateProject(id: off.project.id, name: nil) {
            $0.firebaseEmulatorAdmin = .allNumbers
        }
        try await off.run(.live) { client in
            let listed = try await client.send(.get, codes, key: nil)
            #expect(listed.status == .notFound)
            let owner = try await client.send(.post, lookup, key: "owner", json: #"{"localId":["usr_x"]}"#)
            #expect(owner.status == .unauthorized)
        }
    }

    @Test(
        "Emulator admin lists only the codes the Firebase face started, never a native or Descope sign-in's",
        arguments: TestEngine.available)
    func emulatorListsOnlyFirebaseCodes(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine, configure: { $0.firebaseEmulatorAdmin = true })
        let link = try await Self.named(node)
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) {
            $0.firebaseEmulatorAdmin = .allNumbers
        }
        let (native, descope, firebase) = ("+14155550101", "+14155550102", "+14155550103")
        try await node.run(.live) { client in
            var headers = HTTPFields()
            headers[try #require(HTTPField.Name(AuthHeaders.project))] = node.project.id
            let nativeStart = try await client.send(
                .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"\#(native)"}"#, headers: headers)
            #expect(nativeStart.status == .ok)
            let descopeStart = try await client.descope(
                "/v1/auth/otp/signup-in/sms", bearer: node.project.id, json: #"{"loginId":"\#(descope)"}"#)
            #expect(descopeStart.status == .ok)
            for phone in [firebase, native] {  // the native sign-in's pending code, asked again through Firebase
                let sent = try await client.firebase(
                    "\(Self.v3)/sendVerificationCode", key: link.apiKey, json: #"{"phoneNumber":"\#(phone)"}"#)
                #expect(sent.status == .ok)
            }
            let answer = try await client.send(.get, "/emulator/v1/projects/acme-app/verificationCodes", key: nil)
            #expect(answer.status == .ok)
            let listed = try answer.json()["verificationCodes"] as? [[String: String]] ?? []
            #expect(listed.map { $0["phoneNumber"] } == [firebase])
            #expect(listed.first?["code"] == (try await node.sender.code(to: firebase)))
        }
    }

    @Test("Hostile input gets a 4xx in Google's shape, never a 5xx", arguments: TestEngine.available)
    func hostileInput(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await Self.named(node)
        try await node.run { client in
            let bodies = [
                "", "null", "[]", "42", #"{"phoneNumber":42}"#,
                #"{"phoneNumber":"\#(String(repeating: "9", count: 5000))"}"#,
                #"{"phoneNumber":"+1415555٠١٠٠"}"#, #"{"sessionInfo":["ver_x"],"code":{}}"#,
                #"{"idToken":"\#(String(repeating: "a.", count: 6000))"}"#, String(repeating: "{", count: 10000),
            ]
            let paths = [
                "\(Self.v3)/sendVerificationCode", "\(Self.v3)/verifyPhoneNumber", "\(Self.v1)/accounts:lookup",
                Self.token,
            ]
            for path in paths {
                for body in bodies {
                    let response = try await client.firebase(path, key: link.apiKey, json: body)
                    #expect((400..<500).contains(Int(response.status.code)), "\(path) \(body.prefix(30))")
                    _ = try response.googleError()
                }
            }
            let huge = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: link.apiKey,
                json: #"{"phoneNumber":"\#(String(repeating: "1", count: 2_000_000))"}"#)
            #expect(huge.status == .contentTooLarge)
            _ = try huge.googleError()
            // The token endpoint also takes a form body (the REST clients' refresh), under the same limit.
            let hugeForm = try await client.firebase(
                Self.token, key: link.apiKey,
                form: "grant_type=refresh_token&x=" + String(repeating: "y", count: 70_000))
            #expect(hugeForm.status == .contentTooLarge)
            _ = try hugeForm.googleError()
            let brokenForm = try await client.firebase(
                Self.token, key: link.apiKey, form: "grant_type=refresh_token&refresh_token=%ZZ")
            #expect(brokenForm.status == .badRequest)
            _ = try brokenForm.googleError()
            let noKey = try await client.execute(
                uri: "/\(Self.v3)/sendVerificationCode", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"phoneNumber":"\#(Self.phone)"}"#))
            #expect(try noKey.googleError().hasPrefix("API key not valid"))
            #expect(node.sender.messages().isEmpty)
        }
    }

    @Test("The face can be turned off, and a project needs its Firebase name to be reachable")
    func switchedOff() async throws {
        let off = try await TestNode.make(.sqlite, configure: { $0.firebaseFace = false })
        let link = try await Self.named(off)
        try await off.run { client in
            let response = try await client.firebase(
                "\(Self.v3)/sendVerificationCode", key: link.apiKey, json: #"{"phoneNumber":"\#(Self.phone)"}"#)
            #expect(response.status == .notFound)
        }
        let node = try await TestNode.make(.sqlite)
        let named = try await Self.named(node)
        #expect(named.apiKey.hasPrefix("AIza") && named.apiKey.count == 39)
        let renamed = try await node.verity.firebaseProjects.name(
            projectId: node.project.id, firebaseProjectId: "acme-2")
        #expect(renamed.apiKey == named.apiKey)
        let (other, _) = try await node.otherProject()
        await #expect(throws: VerityError.self) {
            try await node.verity.firebaseProjects.name(projectId: other.id, firebaseProjectId: "acme-2")
        }
        await #expect(throws: VerityError.self) {
            try await node.verity.firebaseProjects.name(projectId: other.id, firebaseProjectId: "Not Valid")
        }
        try await node.verity.database.close()
    }
}
