import Foundation
import Testing
import VerityCore
import VerityJWT

@Suite("Key cache and rotation")
struct KeyRotationTests {
    let first = TestKey(id: "k1")
    let second = TestKey(id: "k2")
    let unpublished = TestKey(id: "k3")

    @Test("Known keys are served from the cache")
    func cached() async throws {
        let source = RecordingJWKSSource([first.jwk])
        let verifier = makeVerifier(source: source)

        for _ in 0..<3 {
            _ = try await verifier.verify(try first.token())
        }

        #expect(await source.fetchCount == 1)
    }

    @Test("An unknown kid refetches once and succeeds after rotation; another within the interval does not refetch")
    func rotation() async throws {
        let source = RecordingJWKSSource([first.jwk])
        let clock = TestClock()
        let verifier = makeVerifier(source: source, clock: clock)
        _ = try await verifier.verify(try first.token())
        #expect(await source.fetchCount == 1)

        await source.publish([first.jwk, second.jwk])
        clock.advance(by: 61)
        let claims = try await verifier.verify(try second.token())
        #expect(claims.subject == "usr_123")
        #expect(await source.fetchCount == 2)

        // The old key stays usable while it is published.
        _ = try await verifier.verify(try first.token())
        #expect(await source.fetchCount == 2)

        clock.advance(by: 30)
        await #expect(throws: SessionTokenError.unknownKey) {
            try await verifier.verify(try unpublished.token())
        }
        #expect(await source.fetchCount == 2)

        clock.advance(by: 31)
        await #expect(throws: SessionTokenError.unknownKey) {
            try await verifier.verify(try unpublished.token())
        }
        #expect(await source.fetchCount == 3)
    }

    @Test("A key removed from the key set is dropped at the next fetch")
    func removal() async throws {
        let source = RecordingJWKSSource([first.jwk])
        let clock = TestClock()
        let verifier = makeVerifier(source: source, clock: clock)
        _ = try await verifier.verify(try first.token())

        await source.publish([second.jwk])
        clock.advance(by: 61)
        _ = try await verifier.verify(try second.token())

        await #expect(throws: SessionTokenError.unknownKey) {
            try await verifier.verify(try first.token())
        }
    }

    @Test("Concurrent requests with a cold cache fetch the key set once")
    func coalescing() async throws {
        let source = RecordingJWKSSource([first.jwk])
        let verifier = makeVerifier(source: source)
        let token = try first.token()

        let subjects = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 {
                group.addTask { try await verifier.verify(token).subject }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }

        #expect(subjects == Array(repeating: "usr_123", count: 20))
        #expect(await source.fetchCount == 1)
    }

    @Test("Keys that are not ES256 keys are skipped")
    func foreignKeys() async throws {
        let rsa = JSONWebKey(kty: "RSA", kid: "k1", alg: "RS256", use: "sig")
        let source = StaticJWKSSource(JSONWebKeySet(keys: [rsa, second.jwk]))
        let verifier = makeVerifier(source: source)

        await #expect(throws: SessionTokenError.unknownKey) {
            try await verifier.verify(try first.token())
        }
        _ = try await verifier.verify(try second.token())
    }

    @Test("refreshKeys fills the cache ahead of the first request")
    func prefetch() async throws {
        let source = RecordingJWKSSource([first.jwk])
        let verifier = makeVerifier(source: source)

        try await verifier.refreshKeys()
        _ = try await verifier.verify(try first.token())

        #expect(await source.fetchCount == 1)
    }
}
