import Crypto
import Foundation
import Testing
import VerityCore
import VerityJWT

@Suite("Session verification")
struct SessionVerifierTests {
    let key = TestKey(id: "k1")

    @Test("A valid token yields its typed and custom claims")
    func validToken() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(
            claims: Fixture.claims([
                "acr": "mfa",
                "plan": "pro",
                "limits": ["seats": 5, "beta": true],
            ]))

        let claims = try await verifier.verify(token)

        #expect(claims.subject == "usr_123")
        #expect(claims.issuer == Fixture.issuer)
        #expect(claims.audience == [Fixture.audience])
        #expect(claims.expiresAt == Fixture.now + 590)
        #expect(claims.issuedAt == Fixture.now - 10)
        #expect(claims.notBefore == nil)
        #expect(claims.authenticationMethods == ["otp", "sms"])
        #expect(claims.authenticationContextClass == "mfa")
        #expect(claims.roles == ["admin"])
        #expect(claims.permissions == ["orders:read", "orders:write"])
        #expect(claims.hasRole("admin"))
        #expect(!claims.hasPermission("orders:delete"))
        #expect(
            claims.customClaims == [
                "plan": .string("pro"),
                "limits": .object(["seats": .integer(5), "beta": .bool(true)]),
            ])
        #expect(claims.rawClaims["sub"] == .string("usr_123"))
    }

    @Test("Absent optional claims read as empty")
    func minimalToken() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(
            claims: Fixture.claims(["iat": nil, "amr": nil, "roles": nil, "permissions": nil]))

        let claims = try await verifier.verify(token)

        #expect(claims.issuedAt == nil)
        #expect(claims.authenticationMethods.isEmpty)
        #expect(claims.authenticationContextClass == nil)
        #expect(claims.roles.isEmpty)
        #expect(claims.permissions.isEmpty)
        #expect(claims.customClaims.isEmpty)
    }

    @Test("A token signed by another key with the same kid is refused")
    func wrongSignature() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let impostor = TestKey(id: key.id)

        await #expect(throws: SessionTokenError.invalidSignature) {
            try await verifier.verify(try impostor.token())
        }
    }

    @Test("A token whose payload was changed after signing is refused")
    func tamperedPayload() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let parts = try key.token().split(separator: ".").map(String.init)
        let forged = try JSONSerialization.data(
            withJSONObject: Fixture.claims(["roles": ["superuser"]]), options: [.sortedKeys])
        let token = "\(parts[0]).\(Base64URL.encode(forged)).\(parts[2])"

        await #expect(throws: SessionTokenError.invalidSignature) {
            try await verifier.verify(token)
        }
    }

    @Test(
        "Tokens not signed with ES256 are refused",
        arguments: [
            #"{"alg":"none","kid":"k1"}"#,
            #"{"alg":"HS256","kid":"k1","typ":"JWT"}"#,
            #"{"alg":"ES384","kid":"k1"}"#,
            #"{"alg":"RS256","kid":"k1"}"#,
            #"{"alg":"es256","kid":"k1"}"#,
        ])
    func unsupportedAlgorithm(header: String) async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let payload = try JSONSerialization.data(withJSONObject: Fixture.claims(), options: [.sortedKeys])
        let signingInput = "\(Base64URL.encode(Array(header.utf8))).\(Base64URL.encode(payload))"
        // `none` carries an empty signature; the others an HMAC-SHA256 made with the public key as the secret, the
        // classic algorithm-confusion attack.
        let secret = SymmetricKey(data: key.privateKey.publicKey.x963Representation)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: secret)
        let signature = header.contains("none") ? "" : Base64URL.encode(Array(mac))

        await #expect(throws: SessionTokenError.unsupportedAlgorithm) {
            try await verifier.verify("\(signingInput).\(signature)")
        }
    }

    @Test(
        "Expiry and not-before are checked with leeway",
        arguments: [
            // (exp, nbf, iat relative to now, leeway, expected error code or nil)
            (590, nil, -10, 60, nil),
            (-30, nil, -600, 60, nil),
            (-61, nil, -600, 60, "expired"),
            (-1, nil, -600, 0, "expired"),
            (0, nil, -600, 0, "expired"),
            (590, 30, -10, 60, nil),
            (590, 61, -10, 60, "not_yet_valid"),
            (590, 1, -10, 0, "not_yet_valid"),
            (590, nil, 30, 60, nil),
            (590, nil, 120, 60, "not_yet_valid"),
        ] as [(Int, Int?, Int, TimeInterval, String?)])
    func validityPeriod(exp: Int, nbf: Int?, iat: Int, leeway: TimeInterval, expected: String?) async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])), leeway: leeway)
        let token = try key.token(
            claims: Fixture.claims([
                "exp": Fixture.epoch + exp,
                "nbf": nbf.map { Fixture.epoch + $0 },
                "iat": Fixture.epoch + iat,
            ]))

        let code: String?
        do {
            _ = try await verifier.verify(token)
            code = nil
        } catch {
            code = error.code
        }
        #expect(code == expected)
    }

    @Test(
        "A token from another issuer is refused",
        arguments: [
            "https://verity.example.com/v1/projects/prj_other",
            "https://evil.example.com/v1/projects/prj_test",
            "https://verity.example.com/v1/projects/prj_test/",
            nil,
        ] as [String?])
    func wrongIssuer(issuer: String?) async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(claims: Fixture.claims(["iss": issuer]))

        await #expect(throws: SessionTokenError.wrongIssuer) {
            try await verifier.verify(token)
        }
    }

    @Test("A non-string issuer is refused")
    func numericIssuer() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(claims: Fixture.claims(["iss": 42]))

        await #expect(throws: SessionTokenError.wrongIssuer) {
            try await verifier.verify(token)
        }
    }

    @Test(
        "A token for another audience is refused, in string and array form",
        arguments: [
            "prj_other",
            ["prj_other", "prj_third"],
            [String](),
            "PRJ_TEST",
            42,
        ] as [any Sendable])
    func wrongAudience(audience: any Sendable) async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(claims: Fixture.claims(["aud": audience]))

        await #expect(throws: SessionTokenError.wrongAudience) {
            try await verifier.verify(token)
        }
    }

    @Test("A token without an audience is refused")
    func missingAudience() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(claims: Fixture.claims(["aud": nil]))

        await #expect(throws: SessionTokenError.wrongAudience) {
            try await verifier.verify(token)
        }
    }

    @Test("An audience array containing the project is accepted")
    func audienceArray() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let token = try key.token(claims: Fixture.claims(["aud": ["prj_other", Fixture.audience]]))

        let claims = try await verifier.verify(token)

        #expect(claims.audience == ["prj_other", Fixture.audience])
    }

    @Test(
        "Garbage is refused as malformed, never crashes",
        arguments: [
            "",
            "garbage",
            "a.b",
            "..",
            "a.b.c.d",
            "!!!.###.$$$",
            "eyJhbGciOiJFUzI1NiJ9.e30",
            "eyJhbGciOiJFUzI1NiJ9.e30.",
            "bm90IGpzb24.e30.AAAA",
            String(repeating: "A", count: 20_000) + ".e30.AAAA",
        ])
    func garbage(token: String) async throws {
        let source = RecordingJWKSSource([key.jwk])
        let verifier = makeVerifier(source: source)

        await #expect(throws: SessionTokenError.malformed) {
            try await verifier.verify(token)
        }
        #expect(await source.fetchCount == 0)
    }

    @Test("Signed tokens with unusable headers or claims are refused as malformed")
    func malformedContent() async throws {
        let verifier = makeVerifier(source: StaticJWKSSource(JSONWebKeySet(keys: [key.jwk])))
        let tokens = [
            try key.token(header: #"{"alg":"ES256","typ":"JWT"}"#),
            try key.token(header: #"{"alg":"ES256","kid":""}"#),
            try key.token(header: #"{"alg":"ES256","kid":"k1","crit":["exp"]}"#),
            try key.token(header: #"["ES256"]"#),
            try key.token(payload: Array("not json".utf8)),
            try key.token(payload: Array("[1,2,3]".utf8)),
            try key.token(payload: Array(#"{"sub":"usr_1""#.utf8)),
            try key.token(claims: Fixture.claims(["sub": nil])),
            try key.token(claims: Fixture.claims(["sub": 7])),
            try key.token(claims: Fixture.claims(["exp": nil])),
            try key.token(claims: Fixture.claims(["exp": "tomorrow"])),
            try key.token(claims: Fixture.claims(["iat": "yesterday"])),
            try key.token(claims: Fixture.claims(["roles": "admin"])),
            try key.token(claims: Fixture.claims(["permissions": [1, 2]])),
            try key.token(claims: Fixture.claims(["amr": ["otp", NSNull()]])),
            try key.token(claims: Fixture.claims(["acr": 2])),
        ]
        for token in tokens {
            await #expect(throws: SessionTokenError.malformed, "\(token)") {
                try await verifier.verify(token)
            }
        }
    }

    @Test("A key source that fails is reported as jwks_unavailable")
    func jwksUnavailable() async throws {
        let source = RecordingJWKSSource([key.jwk])
        await source.fail(with: SimulatedOutage())
        let verifier = makeVerifier(source: source)

        await #expect {
            try await verifier.verify(try key.token())
        } throws: { error in
            (error as? SessionTokenError)?.code == "jwks_unavailable"
        }

        // A failed fetch is retried on the next request rather than throttled.
        await source.fail(with: nil)
        let claims = try await verifier.verify(try key.token())
        #expect(claims.subject == "usr_123")
        #expect(await source.fetchCount == 2)
    }

    @Test("The server convenience initialiser derives the issuer from the server URL and project id")
    func serverInitialiser() {
        let url = URL(string: "https://verity.example.com/")
        let verifier = url.map { SessionVerifier(serverURL: $0, projectID: "prj_test") }

        #expect(verifier?.issuer == Fixture.issuer)
        #expect(verifier?.audience == "prj_test")
        #expect(verifier?.leeway == 60)
        #expect(verifier?.keyRefetchInterval == 60)
    }

    @Test("Every error has its stable code")
    func errorCodes() {
        let codes = [
            SessionTokenError.malformed, .unsupportedAlgorithm, .unknownKey, .invalidSignature, .expired,
            .notYetValid, .wrongIssuer, .wrongAudience, .jwksUnavailable(reason: "down"),
        ].map(\.code)

        #expect(
            codes == [
                "malformed", "unsupported_algorithm", "unknown_key", "invalid_signature", "expired", "not_yet_valid",
                "wrong_issuer", "wrong_audience", "jwks_unavailable",
            ])
    }
}
