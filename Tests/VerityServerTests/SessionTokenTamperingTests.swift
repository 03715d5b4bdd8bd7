import Crypto
import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// Forged and altered session tokens: the server's bearer check refuses every one with 401 `invalid_session`.
@Suite("Session token tampering")
struct SessionTokenTamperingTests {
    static func part(_ object: [String: Any]) throws -> String {
        Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
    }

    static func decode(_ part: Substring) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(String(part)))
        return try #require(try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
    }

    @Test(
        "alg none, HS256 with the public key, changed claims, wrong kid, expired, another project's token",
        arguments: TestEngine.available)
    func forgedTokens(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let signIn = try await client.signIn("+14155550120", node: node)
            let parts = signIn.sessionJwt.split(separator: ".")
            let header = try Self.decode(parts[0])
            var claims = try Self.decode(parts[1])
            #expect(try await client.auth(.get, "me", project: node.project, session: signIn.sessionJwt).status == .ok)

            var forged: [String: String] = [:]
            forged["alg none"] = try Self.part(["alg": "none", "typ": "JWT"]) + "." + String(parts[1]) + "."
            // HS256 keyed with the published public key (the classic algorithm confusion).
            let jwks = try await client.send(.get, "/v1/projects/\(node.project.id)/jwks.json", key: nil)
            let hsHeader = try Self.part(["alg": "HS256", "typ": "JWT", "kid": header["kid"] ?? ""])
            let mac = HMAC<SHA256>.authenticationCode(
                for: Data("\(hsHeader).\(parts[1])".utf8), using: SymmetricKey(data: Data(buffer: jwks.body)))
            forged["HS256 with the JWKS"] = "\(hsHeader).\(parts[1]).\(Base64URL.encode(Array(mac)))"
            claims["sub"] = "usr_someone_else"
            forged["changed sub, old signature"] = "\(parts[0]).\(try Self.part(claims)).\(parts[2])"
            forged["unknown kid"] =
                "\(try Self.part(["alg": "ES256", "typ": "JWT", "kid": "sk_unknown"])).\(parts[1]).\(parts[2])"
            // Signed by a key the project never had, under the project's own kid.
            let stranger = P256.Signing.PrivateKey()
            forged["foreign key, real kid"] = try CompactJWS.sign(
                payload: Array(try Self.decode(parts[1]).jsonData()), keyID: header["kid"] as? String, type: "JWT",
                using: stranger)
            forged["truncated"] = String(signIn.sessionJwt.dropLast(4))
            forged["empty"] = ""

            for (name, token) in forged {
                let response = try await client.auth(.get, "me", project: node.project, session: token)
                #expect(response.status == .unauthorized, "\(name)")
                #expect(try response.problem().code == "invalid_session", "\(name)")
            }

            // A real token of another project is refused here, and this project's is refused there.
            let other = try await node.otherProject()
            let otherTokens = try await client.auth(
                .get, "me", project: other.project, session: signIn.sessionJwt)
            #expect(otherTokens.status == .unauthorized)

            // Expired: ten minutes and a leeway later.
            node.clock.advance(by: 600 + SessionService.leeway + 1)
            let expired = try await client.auth(.get, "me", project: node.project, session: signIn.sessionJwt)
            #expect(try expired.problem().code == "invalid_session")
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    fileprivate func jsonData() throws -> Data {
        try JSONSerialization.data(withJSONObject: self, options: [.sortedKeys])
    }
}
