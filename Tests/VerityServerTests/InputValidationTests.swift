import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing
import VerityCore

@testable import VerityServer

/// Bad input gets a 4xx problem with a stable code, never a 5xx, and writes nothing.
@Suite("Input validation")
struct InputValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var path = "/v1/verifications"
        var body: String
        var contentType = "application/json"
        var status: Int
        var code: String
        /// The problem's whole `detail`, where the case pins it.
        var detail: String? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "malformed JSON", body: #"{"to": "+14155550100", "channel": "#, status: 400, code: "malformed_json"),
        Case(
            name: "not an object", body: #"["+14155550100"]"#, status: 400, code: "invalid_request",
            detail: "The body must be an object."),
        Case(name: "empty body", body: "", status: 400, code: "invalid_request"),
        Case(name: "missing to", body: #"{"channel":"sms"}"#, status: 400, code: "invalid_request"),
        Case(name: "missing channel", body: #"{"to":"+14155550100"}"#, status: 400, code: "invalid_request"),
        Case(
            name: "to is a number", body: #"{"to":14155550100,"channel":"sms"}"#, status: 400, code: "invalid_request"),
        Case(name: "to is null", body: #"{"to":null,"channel":"sms"}"#, status: 400, code: "invalid_request"),
        Case(
            name: "unknown channel", body: #"{"to":"+14155550100","channel":"fax"}"#, status: 400,
            code: "invalid_request", detail: "`channel` must be one of `sms`, `email`, `voice`, `whatsapp`."),
        Case(
            name: "number without plus", body: #"{"to":"14155550100","channel":"sms"}"#, status: 400,
            code: "invalid_phone_number"),
        Case(
            name: "too short for NANP", body: #"{"to":"+1415555010","channel":"sms"}"#, status: 400,
            code: "invalid_phone_number"),
        Case(
            name: "UK trunk zero", body: #"{"to":"+4407700900123","channel":"sms"}"#, status: 400,
            code: "invalid_phone_number"),
        Case(
            name: "unknown country code", body: #"{"to":"+999123456","channel":"sms"}"#, status: 400,
            code: "invalid_phone_number"),
        Case(
            name: "SQL in the number", body: #"{"to":"+1'; DROP TABLE verifications;--","channel":"sms"}"#, status: 400,
            code: "invalid_phone_number"),
        Case(
            name: "email without domain", body: #"{"to":"jane@","channel":"email"}"#, status: 400, code: "invalid_email"
        ),
        Case(
            name: "phone on the email channel", body: #"{"to":"+14155550100","channel":"email"}"#, status: 400,
            code: "invalid_email"),
        Case(
            name: "bad locale", body: #"{"to":"+14155550100","channel":"sms","locale":"<script>"}"#, status: 400,
            code: "invalid_locale"),
        Case(
            name: "multipart body", body: "--x--", contentType: "multipart/form-data; boundary=x", status: 415,
            code: "unsupported_media_type"),
        Case(
            name: "body over 64 KiB",
            body: #"{"to":"+14155550100","channel":"sms","pad":""# + String(repeating: "a", count: 70_000) + #""}"#,
            status: 413, code: "payload_too_large"),
        Case(
            name: "check without code", path: "/v1/verifications/check", body: #"{"to":"+14155550100"}"#, status: 400,
            code: "invalid_request"),
        Case(
            name: "check with letters", path: "/v1/verifications/check",
            body: #"{"to":"+14155550100","code":"12ab56"}"#, status: 400, code: "invalid_code"),
        Case(
            name: "check with a short code", path: "/v1/verifications/check",
            body: #"{"to":"+14155550100","code":"123"}"#, status: 400, code: "invalid_code"),
        Case(
            name: "check with both id and to", path: "/v1/verifications/check",
            body: #"{"id":"ver_x","to":"+14155550100","code":"123456"}"#, status: 400, code: "invalid_request"),
        Case(
            name: "check with neither id nor to", path: "/v1/verifications/check", body: #"{"code":"123456"}"#,
            status: 400, code: "invalid_request"),
        Case(
            name: "check by an invalid number", path: "/v1/verifications/check", body: #"{"to":"+1","code":"123456"}"#,
            status: 400, code: "invalid_phone_number"),
        Case(
            name: "check an unknown id", path: "/v1/verifications/check", body: #"{"id":"ver_nope","code":"123456"}"#,
            status: 404, code: "verification_not_found"),
    ]

    @Test("Bad input is a 4xx problem and writes nothing", arguments: cases)
    func badInput(_ testCase: Case) async throws {
        let node = try await TestNode.make(.sqlite)
        let database = node.verity.database
        try await node.run { client in
            let response = try await client.send(
                .post, testCase.path, key: node.apiKey, json: testCase.body,
                headers: [.contentType: testCase.contentType])
            #expect(response.status.code == testCase.status)
            let problem = try response.problem()
            #expect(problem.code == testCase.code)
            #expect(problem.status == testCase.status)
            #expect(problem.detail?.isEmpty == false)
            if let detail = testCase.detail { #expect(problem.detail == detail) }
            let rows = try await database.execute { sql in
                try await sql.raw(
                    "SELECT (SELECT COUNT(*) FROM verifications) + (SELECT COUNT(*) FROM outbox) AS n"
                ).first()?.decode(column: "n", as: Int.self)
            }
            #expect(rows == 0)
        }
    }

    @Test(
        "Text limits count Unicode scalars, as the OpenAPI document's maxLength does", arguments: TestEngine.available)
    func textLimitsCountScalars(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        // One character of two Unicode scalars (e and a combining acute accent): within a limit counted in
        // characters, over one counted as JSON Schema's `maxLength` counts, as the OpenAPI document states every limit.
        let accented = "e\u{301}"
        @Sendable func text(_ characters: Int) -> String { String(repeating: accented, count: characters) }
        @Sendable func encoded(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        }
        try await node.run { client in
            let longUserId = try #require(text(65).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed))
            let device = try await TestDevice.enrolled(node: node, client: client)
            let refused: [(String, [String: Any])] = [
                ("/v1/users", ["loginIds": ["+14155550100"], "displayName": text(101)]),
                ("/v1/users/\(longUserId)/factors/totp", ["friendlyName": "Phone"]),
                ("/v1/users/ada/factors/totp", ["friendlyName": text(51)]),
                ("/v1/users/ada/factors/totp", ["friendlyName": "Phone", "issuer": text(51)]),
                ("/v1/challenges", ["factorId": device.factorId, "message": text(129)]),
                (
                    "/v1/challenges",
                    [
                        "factorId": device.factorId, "message": "Sign in?",
                        "details": [["label": text(33), "value": "x"]],
                    ]
                ),
                (
                    "/v1/challenges",
                    ["factorId": device.factorId, "message": "Sign in?", "context": ["location": text(129)]]
                ),
            ]
            for (path, body) in refused {
                let response = try await client.send(.post, path, key: node.apiKey, json: try encoded(body))
                #expect(response.status == .badRequest, "\(path) \(body.keys.sorted())")
                #expect(try response.problem().code == "invalid_request", "\(path)")
            }
            // At the limit in scalars it is taken, and comes back within the document's maxLength.
            let user = try await client.send(
                .post, "/v1/users", key: node.apiKey,
                json: try encoded(["loginIds": ["+14155550100"], "displayName": text(100)]))
            #expect(user.status == .created)
            #expect(try user.decode(User.self).displayName?.unicodeScalars.count == 200)
            let challenge = try await client.send(
                .post, "/v1/challenges", key: node.apiKey,
                json: try encoded([
                    "factorId": device.factorId, "message": text(128), "details": [["label": text(32), "value": "x"]],
                ]))
            #expect(challenge.status == .created)
            #expect(try challenge.decode(Challenge.self).details.first?.label.unicodeScalars.count == 64)
        }
    }

    @Test("An unknown path is a 404 problem; a known path under another method a 405 that names the methods")
    func unknownRoutes() async throws {
        let node = try await TestNode.make(.sqlite)
        try await node.run { client in
            let missing = try await client.send(.get, "/v2/nothing", key: nil)
            #expect(missing.status == .notFound)
            #expect(try missing.problem().code == "not_found")
            for (method, path, allow) in [
                (HTTPRequest.Method.delete, "/v1/verifications/ver_x", "GET, HEAD"),
                (.get, "/v1/verifications", "POST"), (.trace, "/health", "GET, HEAD"),
                (.put, "/v1/users/usr_x", "DELETE, GET, HEAD, PATCH"),
            ] {
                let response = try await client.send(method, path, key: nil)
                #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                #expect(response.headers[.allow] == allow, "\(method) \(path)")
                let problem = try response.problem()
                #expect(problem.code == "method_not_allowed")
                #expect(problem.detail == "This path allows \(allow).")
            }
            // The faces word it in their shapes, with the same header (TwilioBoundaryTests, DescopeFaceTests).
            for (path, allow) in [
                ("/twilio/v2/Services/VA123/Verifications", "POST"), ("/descope/v1/auth/otp/signin/sms", "POST"),
            ] {
                let response = try await client.send(.delete, path, key: nil)
                #expect(response.status == .methodNotAllowed, "\(path)")
                #expect(response.headers[.allow] == allow, "\(path)")
                #expect(response.headers[.contentType] == "application/json", "\(path)")
            }
            // A route's own 404 stays one, and HEAD answers where GET does.
            let unknown = try await client.send(.get, "/v1/verifications/ver_x", key: node.apiKey)
            #expect(try unknown.problem().code == "verification_not_found")
            let head = try await client.send(.head, "/health", key: nil)
            #expect(head.status == .ok)
        }
    }

    @Test(
        "Hostile strings never cause a 5xx",
        arguments: [
            "", " ", "+", "++1", "+1\u{0}4155550100", "+١٤١٥٥٥٥٠١٠٠", String(repeating: "9", count: 5000),
            "\u{202E}+14155550100", "a@b", "a@@b.com", "x@" + String(repeating: "a", count: 300) + ".com",
            #"\"quoted\"@example.com"#, "ünï@exämple.com", "%00", "${jndi:ldap://x}",
        ])
    func hostileDestinations(_ destination: String) async throws {
        let node = try await TestNode.make(.sqlite)
        try await node.run { client in
            for channel in ["sms", "email"] {
                let body = try JSONSerialization.data(withJSONObject: ["to": destination, "channel": channel])
                let response = try await client.send(
                    .post, "/v1/verifications", key: node.apiKey, json: String(decoding: body, as: UTF8.self))
                #expect(response.status.code < 500)
                if response.status.code >= 400 { _ = try response.problem() }
            }
        }
    }
}
