import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import VerityCore

@testable import VerityServer

/// Input built to break parsers and queries, on the app-facing and possession endpoints: always a 4xx problem.
@Suite("Hostile input")
struct HostileInputTests {
    static let bodies: [(String, String)] = [
        ("deeply nested arrays", String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)),
        (
            "deeply nested objects",
            String(repeating: #"{"a":"#, count: 20_000) + "1" + String(repeating: "}", count: 20_000)
        ),
        ("a huge number", #"{"loginId":1"# + String(repeating: "0", count: 10_000) + "}"),
        ("a NUL in a string", #"{"loginId":"+1415555\u00000100"}"#),
        ("SQL in the login id", #"{"loginId":"' OR 1=1; DROP TABLE users;--@example.com"}"#),
        ("a confusable login id", #"{"loginId":"ｊａｎｅ@ｅｘａｍｐｌｅ.ｃｏｍ"}"#),
        ("right-to-left override", #"{"loginId":"\u202E+14155550100"}"#),
        ("lone surrogate", #"{"loginId":"\ud800@example.com"}"#),
    ]

    @Test("Parser- and query-breaking bodies get a 4xx problem", arguments: TestEngine.available)
    func bodies(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for (name, body) in Self.bodies {
                for path in ["otp/start", "otp/verify", "refresh"] {
                    let response = try await client.auth(.post, path, project: node.project, json: body)
                    #expect((400..<500).contains(Int(response.status.code)), "\(name) to \(path)")
                    _ = try response.problem()
                }
            }
            // Bytes that are not UTF-8 at all.
            let invalid = try await client.execute(
                uri: "/v1/auth/otp/start", method: .post,
                headers: [
                    .contentType: "application/json",
                    try #require(HTTPField.Name(AuthHeaders.project)): node.project.id,
                ],
                body: ByteBuffer(bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0xC3, 0x28, 0x7D]))
            #expect(invalid.status == .badRequest)
            _ = try invalid.problem()
        }
    }

    @Test(
        "A NUL character in a path, a query or a JSON string is a 400 problem on every engine (PostgreSQL refuses it)",
        arguments: TestEngine.available)
    func nulCharacters(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let paths = [
                "/v1/users/a%00b", "/v1/users/a%00b/factors", "/v1/verifications/ver_%00", "/v1/roles/a%00",
                "/v1/challenges/chl_%00", "/v1/possession/pos_%00", "/v1/users?cursor=%00",
                "/v1/security-events?userId=usr_%00",
            ]
            for path in paths {
                let response = try await client.send(.get, path, key: node.apiKey)
                #expect((400..<500).contains(Int(response.status.code)), "\(path): \(response.status)")
                _ = try response.problem()
            }
            let bodies = [
                ("/v1/users", #"{"loginIds":["a\u0000b@example.com"],"name":"x"}"#),
                ("/v1/roles", #"{"name":"admin\u0000","description":"x"}"#),
                ("/v1/verifications/check", #"{"id":"ver_\u0000","code":"123456"}"#),
            ]
            for (path, body) in bodies {
                let response = try await client.send(.post, path, key: node.apiKey, json: body)
                #expect(response.status == .badRequest, "\(path) \(body): \(response.status)")
                _ = try response.problem()
            }
        }
    }

    @Test("Header abuse: huge, repeated and malformed credentials are 401s", arguments: TestEngine.available)
    func headers(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            for value in [
                "Bearer " + String(repeating: "A", count: 30_000), "Bearer", "Basic dXNlcjpwYXNz", "bearer vk_x",
                "Bearer vk_\u{0}", "Bearer vpt_pos_x.y",
            ] {
                let response = try await client.send(
                    .get, "/v1/users", key: nil, headers: [.authorization: value])
                #expect(response.status == .unauthorized, "\(value.prefix(20))")
            }
            let project = try #require(HTTPField.Name(AuthHeaders.project))
            for id in [String(repeating: "p", count: 10_000), "prj_' OR 1=1", "prj_\u{202E}x", ""] {
                let response = try await client.send(
                    .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"+14155550100"}"#,
                    headers: [project: id])
                #expect([401, 404].contains(Int(response.status.code)))
                _ = try response.problem()
            }
            let possession = try await client.send(
                .get, "/v1/possession/pos_x", key: nil, headers: [.authorization: "Bearer vpt_pos_x.secret"])
            #expect(possession.status == .unauthorized)
        }
    }
}
