import Crypto
import Foundation
import HummingbirdTesting
import SQLKit
import Testing
import VerityCore
import VerityJWT

@testable import VerityServer

@Suite("Session signing keys and the JWKS")
struct SigningKeyTests {
    /// Claims as the session issuer will write them.
    static func claims(_ node: TestNode, subject: String = "usr_1", lifetime: TimeInterval = 600) throws -> [UInt8] {
        let now = Int(node.clock.now().timeIntervalSince1970)
        let issuer = "\(node.configuration.resolvedPublicURL)/v1/projects/\(node.project.id)"
        let object: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(node.project.id), "sub": .string(subject),
            "iat": .integer(Int64(now)), "exp": .integer(Int64(now) + Int64(lifetime)), "amr": .array([.string("otp")]),
        ]
        return Array(try JSONEncoder().encode(object))
    }

    /// A verifier that reads the keys the server publishes, as a customer's backend would (its own code, its own
    /// cache), with the test clock.
    static func verifier(_ node: TestNode, client: some TestClientProtocol) async throws -> SessionVerifier {
        let response = try await client.send(
            .get, "/v1/projects/\(node.project.id)/.well-known/jwks.json", key: nil)
        #expect(response.status == .ok)
        #expect(response.headers[.cacheControl] == "public, max-age=60")
        let keys = try JSONDecoder().decode(JSONWebKeySet.self, from: Data(buffer: response.body))
        let clock = node.clock
        return SessionVerifier(
            issuer: "\(node.configuration.resolvedPublicURL)/v1/projects/\(node.project.id)",
            audience: node.project.id, keySource: StaticJWKSSource(keys), now: { clock.now() })
    }

    @Test(
        "Tokens the server signs verify with VerityJWT against the served JWKS; a forged key with the same kid does not",
        arguments: TestEngine.available)
    func signAndVerify(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let token = try await node.verity.signingKeys.sign(try Self.claims(node), projectId: node.project.id)
        try await node.run { client in
            let claims = try await Self.verifier(node, client: client).verify(token)
            #expect(claims.subject == "usr_1")
            #expect(claims.authenticationMethods == ["otp"])

            let discovery = try await client.send(
                .get, "/v1/projects/\(node.project.id)/.well-known/openid-configuration", key: nil)
            let document = try JSONSerialization.jsonObject(with: Data(buffer: discovery.body)) as? [String: Any]
            #expect(document?["issuer"] as? String == "http://127.0.0.1:8080/v1/projects/\(node.project.id)")
            #expect(
                document?["jwks_uri"] as? String
                    == "http://127.0.0.1:8080/v1/projects/\(node.project.id)/.well-known/jwks.json")

            // A token from another key with the same kid is refused.
            let forged = try CompactJWS.sign(
                payload: try Self.claims(node), keyID: try CompactJWS(parsing: token).header.kid,
                using: P256.Signing.PrivateKey())
            await #expect(throws: SessionTokenError.invalidSignature) {
                try await Self.verifier(node, client: client).verify(forged)
            }
        }
    }

    @Test(
        "Rotation publishes the new key first, signs with it two minutes later, and keeps the old one a day",
        arguments: TestEngine.available)
    func rotation(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let keys = node.verity.signingKeys
        let first = try await keys.sign(try Self.claims(node), projectId: node.project.id)
        let firstKid = try #require(try CompactJWS(parsing: first).header.kid)
        let rotated = try await keys.rotate(projectId: node.project.id)
        let newKid = try #require(rotated.kid)
        #expect(try await keys.keySet(projectId: node.project.id).keys.compactMap(\.kid) == [newKid, firstKid])

        // Until the new key is active, the old one signs.
        let before = try await keys.sign(try Self.claims(node), projectId: node.project.id)
        #expect(try CompactJWS(parsing: before).header.kid == firstKid)
        node.clock.advance(by: SigningKeyService.activationDelay + 1)
        let after = try await keys.sign(try Self.claims(node), projectId: node.project.id)
        #expect(try CompactJWS(parsing: after).header.kid == newKid)
        try await node.run { client in
            // Tokens of both keys verify, with VerityJWT and with nothing but swift-crypto.
            let verifier = try await Self.verifier(node, client: client)
            for token in [first, before, after] {
                #expect(try await verifier.verify(token).subject == "usr_1")
                let claims = try await SessionAPITests.independentlyVerified(
                    token, client: client, project: node.project)
                #expect(claims["sub"] as? String == "usr_1")
            }

            node.clock.advance(by: SigningKeyService.retiredKeyPublication)
            #expect(try await keys.keySet(projectId: node.project.id).keys.compactMap(\.kid) == [newKid])
        }
    }

    @Test(
        "A retired key stays in the JWKS until the last token it signed at the longest session lifetime has expired",
        arguments: TestEngine.available)
    func retirementOutlivesTokens(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let keys = node.verity.signingKeys
        let longest = TimeInterval(ProjectSettings.sessionLifetimeRange.upperBound)
        let firstKid = try #require(
            try CompactJWS(parsing: try await keys.sign(try Self.claims(node), projectId: node.project.id)).header.kid)
        _ = try await keys.rotate(projectId: node.project.id)
        // The old key's last token, signed just before the new key takes over, for the longest lifetime.
        node.clock.advance(by: SigningKeyService.activationDelay - 1)
        let last = try await keys.sign(try Self.claims(node, lifetime: longest), projectId: node.project.id)
        #expect(try CompactJWS(parsing: last).header.kid == firstKid)
        try await node.run { client in
            // A minute after it expired (a verifier's leeway), its key is still published.
            node.clock.advance(by: longest + 60)
            let claims = try await SessionAPITests.independentlyVerified(last, client: client, project: node.project)
            #expect(claims["sub"] as? String == "usr_1")
            #expect(try await keys.keySet(projectId: node.project.id).keys.contains { $0.kid == firstKid })

            node.clock.advance(by: SigningKeyService.retiredKeyPublication)
            #expect(try await !keys.keySet(projectId: node.project.id).keys.contains { $0.kid == firstKid })
        }
    }

    @Test(
        "Each project has its own keys; unknown projects are 404; private keys are stored sealed",
        arguments: TestEngine.available)
    func tenancy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let other = try await node.otherProject()
        let token = try await node.verity.signingKeys.sign(try Self.claims(node), projectId: node.project.id)
        _ = try await node.verity.signingKeys.sign(try Self.claims(node), projectId: other.project.id)
        let kid = try #require(try CompactJWS(parsing: token).header.kid)
        let otherKeys = try await node.verity.signingKeys.keySet(projectId: other.project.id).keys
        #expect(otherKeys.count == 1)
        #expect(!otherKeys.contains { $0.kid == kid })

        let stored = try await node.verity.database.execute { sql in
            try await sql.raw("SELECT sealed_private_key FROM signing_keys").all().map {
                try $0.decode(column: "sealed_private_key", as: String.self)
            }
        }
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { Data(base64Encoded: $0)?.count ?? 0 > 32 + 12 })
        try await node.run { client in
            for path in ["prj_unknown", "not-a-project", "%2e%2e"] {
                let response = try await client.send(.get, "/v1/projects/\(path)/.well-known/jwks.json", key: nil)
                #expect(response.status == .notFound)
                #expect(try response.problem().code == "project_not_found")
            }
        }
    }
}

@Suite("Signing keys cached on each node")
struct SigningKeyCacheTests {
    static var sharedEngines: [TestEngine] { TestEngine.available.filter { $0 != .sqlite } }

    @Test(
        "Two nodes on one database: a first key made on one verifies on the other, and a rotation reaches both",
        arguments: sharedEngines)
    func twoNodes(engine: TestEngine) async throws {
        let first = try await TestNode.make(engine)
        let second = try await first.reopened()
        let projectId = first.project.id
        let claims = try SigningKeyTests.claims(first)
        // The second node looks first and caches a project with no key yet.
        #expect(try await second.verity.signingKeys.verifyingKey("sk_unknown", projectId: projectId) == nil)
        let token = try await first.verity.signingKeys.sign(claims, projectId: projectId)
        let kid = try #require(try CompactJWS(parsing: token).header.kid)
        #expect(try await second.verity.signingKeys.verifyingKey(kid, projectId: projectId) != nil)
        #expect(
            try await CompactJWS(parsing: second.verity.signingKeys.sign(claims, projectId: projectId)).header.kid
                == kid)

        // Rotated elsewhere (as `verity admin signing-keys rotate` does): the second node signs with the new key once
        // it is active, though it had the old one cached.
        let rotated = try await first.verity.signingKeys.rotate(projectId: projectId)
        first.clock.advance(by: SigningKeyService.activationDelay + 1)
        let after = try await second.verity.signingKeys.sign(claims, projectId: projectId)
        #expect(try CompactJWS(parsing: after).header.kid == rotated.kid)
        #expect(try await second.verity.signingKeys.verifyingKey(kid, projectId: projectId) != nil)
        try await second.verity.database.close()
        try await first.verity.database.close()
    }
}
