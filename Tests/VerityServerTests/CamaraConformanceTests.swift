import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// The part of CAMARA's published OpenAPI document (Tests/camara/number-verification-v1.yaml, vendored as published)
/// that says what a `/verify` request is: its path under the server URL, and the request body's schema.
struct NumberVerificationDocument {
    /// The path of `servers[0].url` after `{apiRoot}`: `/number-verification/v1`.
    var basePath: String
    var minProperties: Int
    var maxProperties: Int
    /// Each property of `NumberVerificationRequestBody`: its type and pattern.
    var properties: [String: (type: String, pattern: String)]

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("camara/number-verification-v1.yaml")

    /// Reads the document's own text: the few YAML shapes these parts use (`key: value` at fixed indentation).
    static func load() throws -> NumberVerificationDocument {
        let lines = try String(contentsOf: url, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        func value(_ line: Substring) -> String {
            let raw = line.split(separator: ":", maxSplits: 1).last.map(String.init) ?? ""
            return raw.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "'\""))
        }
        let server = try #require(lines.first { $0.hasPrefix("  - url: ") })
        let basePath = String(try #require(value(server).split(separator: "}", maxSplits: 1).last))
        #expect(lines.contains("  /verify:"))
        let start = try #require(lines.firstIndex(of: "    NumberVerificationRequestBody:"))
        var end = start + 1
        while end < lines.count, lines[end].hasPrefix("      ") || lines[end].isEmpty { end += 1 }
        let block = lines[(start + 1)..<end]
        func integer(_ key: String) throws -> Int {
            try #require(block.first { $0.hasPrefix("      \(key):") }.flatMap { Int(value($0)) })
        }
        var properties: [String: (type: String, pattern: String)] = [:]
        var current: String?
        for line in block {
            if line.hasPrefix("        "), !line.hasPrefix("         "), line.hasSuffix(":") {
                let name = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ":", with: "")
                properties[name] = ("", "")
                current = name
            } else if let name = current, line.hasPrefix("          type:") {
                properties[name]?.type = value(line)
            } else if let name = current, line.hasPrefix("          pattern:") {
                properties[name]?.pattern = value(line)
            }
        }
        return NumberVerificationDocument(
            basePath: basePath, minProperties: try integer("minProperties"),
            maxProperties: try integer("maxProperties"),
            properties: properties)
    }

    /// What is wrong with a `/verify` request to `path` with `body`, by the document; empty when nothing is.
    func violations(path: String, method: String, body: [UInt8]) -> [String] {
        var wrong: [String] = []
        if method != "POST" { wrong.append("method \(method), not POST") }
        if !path.hasSuffix(basePath + "/verify") { wrong.append("path \(path) is not under \(basePath)/verify") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return wrong + ["the body is not a JSON object"]
        }
        if !(minProperties...maxProperties).contains(object.count) {
            wrong.append("\(object.count) properties, not \(minProperties) to \(maxProperties)")
        }
        for (key, value) in object {
            guard let schema = properties[key] else {
                wrong.append("unknown property \(key)")
                continue
            }
            guard schema.type == "string", let text = value as? String else {
                wrong.append("\(key) is not a \(schema.type)")
                continue
            }
            // v1.0.0 gives `hashedPhoneNumber` no pattern (later releases add `^[a-fA-F0-9]{64}$`).
            if !schema.pattern.isEmpty, text.range(of: schema.pattern, options: .regularExpression) == nil {
                wrong.append("\(key) does not match \(schema.pattern)")
            }
        }
        return wrong
    }
}

@Suite("CAMARA OpenAPI conformance")
struct CamaraConformanceTests {
    @Test("The vendored document reads as Number Verification v1")
    func document() throws {
        let document = try NumberVerificationDocument.load()
        #expect(document.basePath == "/number-verification/v1")
        #expect(document.minProperties == 1 && document.maxProperties == 1)
        #expect(Set(document.properties.keys) == ["phoneNumber", "hashedPhoneNumber"])
        // The check bites: a body with both, an unknown key, or a number not in E.164 is refused.
        for bad in [
            #"{"phoneNumber":"+14155550199","hashedPhoneNumber":"\#(String(repeating: "a", count: 64))"}"#,
            #"{"msisdn":"+14155550199"}"#, #"{"phoneNumber":"4155550199"}"#, #"{"hashedPhoneNumber":64}"#, "{}",
        ] {
            #expect(
                !document.violations(path: "/number-verification/v1/verify", method: "POST", body: Array(bad.utf8))
                    .isEmpty)
        }
    }

    @Test(
        "Verity's /verify requests match the published OpenAPI document, hashed and plain",
        arguments: [CarrierCheckSettings.NumberFormat.hashed, .plain])
    func requestsMatchDocument(format: CarrierCheckSettings.NumberFormat) async throws {
        let document = try NumberVerificationDocument.load()
        let standIn = CamaraStandIn()
        try await CarrierCheckTests.withCarrier(.sqlite, standIn, format: format) { node, client in
            let (_, callback) = try await CarrierCheckTests.startAndOpen(node: node, client: client)
            #expect(try callback.decode(PossessionState.self).carrierCheck == .verified)
        }
        let requests = standIn.verifyRequests
        #expect(requests.count == 1)
        for request in requests {
            #expect(document.violations(path: request.path, method: request.method, body: request.body) == [])
            #expect(request.headers["content-type"] == "application/json")
            // What the schema's description says of the hash (later releases write it as a pattern).
            if let hashed = (try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])?[
                "hashedPhoneNumber"]
            {
                #expect(hashed.range(of: "^[a-fA-F0-9]{64}$", options: .regularExpression) != nil)
            }
            #expect(request.headers["authorization"]?.hasPrefix("Bearer ") == true)
        }
        // The OAuth steps: PKCE S256 and the profile's scope on the front channel, client_secret_basic and the
        // verifier at the token endpoint.
        let authorize = try #require(standIn.received.first { $0.path == "/authorize" })
        #expect(authorize.query["code_challenge_method"] == "S256")
        #expect(authorize.query["scope"] == CarrierCheckSettings.defaultScope)
        let token = try #require(standIn.received.first { $0.path == "/token" })
        let form = decodeForm(String(decoding: token.body, as: UTF8.self)) ?? []
        #expect(Set(form.map(\.name)) == ["grant_type", "code", "redirect_uri", "code_verifier"])
    }
}
