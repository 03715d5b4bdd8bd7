import Crypto
import Foundation
import VerityCore
import VerityJWT

/// The issuer, audience and instant the tests verify against.
enum Fixture {
    static let issuer = "https://verity.example.com/v1/projects/prj_test"
    static let audience = "prj_test"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static var epoch: Int { Int(now.timeIntervalSince1970) }

    /// Claims of a valid session token at ``now``.
    static func claims(_ overrides: [String: Any?] = [:]) -> [String: Any] {
        var claims: [String: Any] = [
            "sub": "usr_123",
            "iss": issuer,
            "aud": audience,
            "iat": epoch - 10,
            "exp": epoch + 590,
            "amr": ["otp", "sms"],
            "roles": ["admin"],
            "permissions": ["orders:read", "orders:write"],
        ]
        for (name, value) in overrides {
            claims[name] = value
        }
        return claims
    }
}

/// A signing key of the "server", with its `kid`.
struct TestKey {
    let id: String
    let privateKey = P256.Signing.PrivateKey()

    var jwk: JSONWebKey { JSONWebKey(publicKey: privateKey.publicKey, keyID: id) }

    /// A session token signed by hand: `base64url(header).base64url(payload).base64url(r || s)`.
    func token(claims: [String: Any] = Fixture.claims(), header: String? = nil) throws -> String {
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        return try token(payload: Array(payload), header: header)
    }

    /// A token over arbitrary payload bytes, with a raw header JSON text (by default ES256 with this key's `kid`).
    func token(payload: [UInt8], header: String? = nil) throws -> String {
        let headerJSON = header ?? #"{"alg":"ES256","kid":"\#(id)","typ":"JWT"}"#
        let signingInput = "\(Base64URL.encode(Array(headerJSON.utf8))).\(Base64URL.encode(payload))"
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        return "\(signingInput).\(Base64URL.encode(signature.rawRepresentation))"
    }
}

/// A key set that can be rotated, counting how often it is fetched.
actor RecordingJWKSSource: JWKSSource {
    private(set) var keySet: JSONWebKeySet
    private(set) var fetchCount = 0
    private var failure: (any Error)?

    init(_ keys: [JSONWebKey]) {
        keySet = JSONWebKeySet(keys: keys)
    }

    func keys() async throws -> JSONWebKeySet {
        fetchCount += 1
        // Let concurrent callers pile up, so coalescing is actually exercised.
        await Task.yield()
        if let failure { throw failure }
        return keySet
    }

    func publish(_ keys: [JSONWebKey]) {
        keySet = JSONWebKeySet(keys: keys)
    }

    func fail(with error: (any Error)?) {
        failure = error
    }
}

struct SimulatedOutage: Error {}

/// A clock the test moves by hand.
// @unchecked Sendable: the only state is `current`, read and written under `lock`.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    init(_ start: Date = Fixture.now) {
        current = start
    }

    func now() -> Date {
        lock.withLock { current }
    }

    func advance(by seconds: TimeInterval) {
        lock.withLock { current += seconds }
    }
}

func makeVerifier(
    source: any JWKSSource,
    leeway: TimeInterval = 60,
    clock: TestClock = TestClock()
) -> SessionVerifier {
    SessionVerifier(
        issuer: Fixture.issuer,
        audience: Fixture.audience,
        keySource: source,
        leeway: leeway,
        now: { clock.now() }
    )
}
