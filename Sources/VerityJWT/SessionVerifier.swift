import Crypto
import Foundation
import VerityCore

/// Validates Verity session tokens offline, the way a customer's backend checks the `sessionJwt` an app sends.
///
/// A session token is a compact JWS signed with ES256 by a key of the project. The verifier looks the key up by the
/// token's `kid` in a cache filled from a ``JWKSSource``; when a `kid` is unknown (after a key rotation) it fetches
/// the key set again, but at most once per ``keyRefetchInterval``. It then checks the claims: `iss` equals
/// ``issuer``, `aud` is or contains ``audience``, `exp` is present and not past, `nbf` and `iat` are not in the
/// future — the time checks allowing ``leeway`` for clock skew.
///
/// Create one verifier per project and keep it for the life of the process, so its key cache is reused; copies
/// share the cache.
///
/// ```swift
/// let verifier = SessionVerifier(serverURL: URL(string: "https://verity.example.com")!, projectID: "prj_123")
/// let claims = try await verifier.verify(sessionToken)
/// print(claims.subject, claims.roles)
/// ```
public struct SessionVerifier: Sendable {
    /// The expected `iss` claim: the server's public URL followed by `/v1/projects/` and the project id.
    public let issuer: String
    /// The expected audience: the project id.
    public let audience: String
    /// The clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
    public let leeway: TimeInterval
    /// The shortest time between two fetches of the key set triggered by unknown `kid`s, in seconds.
    public let keyRefetchInterval: TimeInterval
    private let now: @Sendable () -> Date
    private let cache: KeyCache

    /// Creates a verifier with an explicit issuer and key source.
    ///
    /// - Parameters:
    ///   - issuer: The expected `iss`, for example `"https://verity.example.com/v1/projects/prj_123"`.
    ///   - audience: The expected audience, the project id, for example `"prj_123"`.
    ///   - keySource: Where to fetch the project's key set from.
    ///   - leeway: The clock skew tolerated on `exp`, `nbf` and `iat`; 60 seconds unless given.
    ///   - keyRefetchInterval: The shortest time between two fetches triggered by unknown `kid`s; 60 seconds unless
    ///     given.
    ///   - now: The clock; the system clock unless given.
    public init(
        issuer: String,
        audience: String,
        keySource: any JWKSSource,
        leeway: TimeInterval = 60,
        keyRefetchInterval: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.keyRefetchInterval = keyRefetchInterval
        self.now = now
        self.cache = KeyCache(source: keySource, refetchInterval: keyRefetchInterval, now: now)
    }

    /// Creates a verifier for a project on a Verity server, fetching keys with `URLSession`.
    ///
    /// The issuer is `serverURL` (without a trailing `/`) followed by `/v1/projects/` and `projectID`; the key set
    /// is fetched from that issuer followed by `/.well-known/jwks.json`.
    ///
    /// - Parameters:
    ///   - serverURL: The server's public URL, for example `https://verity.example.com`.
    ///   - projectID: The public project id, which is also the expected audience.
    ///   - leeway: The clock skew tolerated on `exp`, `nbf` and `iat`; 60 seconds unless given.
    ///   - keyRefetchInterval: The shortest time between two fetches triggered by unknown `kid`s; 60 seconds unless
    ///     given.
    ///   - now: The clock; the system clock unless given.
    public init(
        serverURL: URL,
        projectID: String,
        leeway: TimeInterval = 60,
        keyRefetchInterval: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        var base = serverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let issuer = "\(base)/v1/projects/\(projectID)"
        let jwksURL = serverURL.appending(path: "v1/projects/\(projectID)/.well-known/jwks.json")
        self.init(
            issuer: issuer,
            audience: projectID,
            keySource: URLSessionJWKSSource(url: jwksURL),
            leeway: leeway,
            keyRefetchInterval: keyRefetchInterval,
            now: now
        )
    }

    /// Verifies a session token and returns its claims.
    ///
    /// - Parameter token: The compact JWS, `header.payload.signature`.
    /// - Returns: The claims, once the signature, issuer, audience and validity period have been checked.
    /// - Throws: ``SessionTokenError``, for the first check that fails in this order: the token's structure and `kid`
    ///   (`malformed`), its algorithm (`unsupported_algorithm`), its key (`unknown_key`, `jwks_unavailable`), the
    ///   signature (`invalid_signature`), `iss` (`wrong_issuer`), `aud` (`wrong_audience`), the types of the other
    ///   claims (`malformed`), then `exp` (`expired`) and `nbf`/`iat` (`not_yet_valid`).
    public func verify(_ token: String) async throws(SessionTokenError) -> SessionClaims {
        let jws = try CompactJWS(parsing: token, failingWith: SessionTokenError.self)
        guard let keyID = jws.header.kid, !keyID.isEmpty else { throw .malformed }
        let key = try await cache.key(withID: keyID)
        guard jws.isValidSignature(for: key) else { throw .invalidSignature }

        let raw: [String: JSONValue]
        do {
            raw = try jws.decodePayload([String: JSONValue].self)
        } catch {
            throw .malformed
        }
        guard raw["iss"]?.stringValue == issuer else { throw .wrongIssuer }
        let audiences: [String]
        switch raw["aud"] {
        case .string(let value): audiences = [value]
        case .array(let values): audiences = values.compactMap(\.stringValue)
        default: throw .wrongAudience
        }
        guard audiences.contains(audience) else { throw .wrongAudience }

        let claims = try SessionClaims(raw: raw, issuer: issuer, audience: audiences)
        let now = now()
        guard now.timeIntervalSince(claims.expiresAt) < leeway else { throw .expired }
        if let notBefore = claims.notBefore, notBefore.timeIntervalSince(now) > leeway { throw .notYetValid }
        if let issuedAt = claims.issuedAt, issuedAt.timeIntervalSince(now) > leeway { throw .notYetValid }
        return claims
    }

    /// Fetches the key set now, replacing the cached keys, for example at start-up so the first request does not
    /// wait for it. Not needed otherwise: ``verify(_:)`` fetches on demand.
    ///
    /// - Throws: ``SessionTokenError/jwksUnavailable(reason:)`` if the key set cannot be fetched.
    public func refreshKeys() async throws(SessionTokenError) {
        try await cache.refresh()
    }
}

/// The verifier's cache of verification keys by `kid`, refetched on unknown `kid`s at most once per interval.
private actor KeyCache {
    private let source: any JWKSSource
    private let refetchInterval: TimeInterval
    private let now: @Sendable () -> Date
    private var keys: [String: P256.Signing.PublicKey] = [:]
    /// When the last successful fetch started; `nil` before the first.
    private var lastFetch: Date?
    /// The fetch in progress, which concurrent lookups of unknown `kid`s wait for instead of fetching again.
    private var inFlight: Task<FetchedKeys, any Error>?

    init(source: any JWKSSource, refetchInterval: TimeInterval, now: @escaping @Sendable () -> Date) {
        self.source = source
        self.refetchInterval = refetchInterval
        self.now = now
    }

    func key(withID keyID: String) async throws(SessionTokenError) -> P256.Signing.PublicKey {
        if let key = keys[keyID] { return key }
        if let lastFetch, now().timeIntervalSince(lastFetch) < refetchInterval, inFlight == nil {
            throw .unknownKey
        }
        try await refresh()
        guard let key = keys[keyID] else { throw .unknownKey }
        return key
    }

    func refresh() async throws(SessionTokenError) {
        let task: Task<FetchedKeys, any Error>
        if let inFlight {
            task = inFlight
        } else {
            let source = source
            let started = now()
            task = Task { FetchedKeys(keys: Self.usableKeys(in: try await source.keys()), started: started) }
            inFlight = task
        }
        let result = await task.result
        if inFlight == task { inFlight = nil }
        switch result {
        case .success(let fetched):
            // Every waiter stores the result, so none reads the cache before it is filled; an older fetch that
            // resumes late never replaces a newer one.
            if fetched.started >= (lastFetch ?? .distantPast) {
                keys = fetched.keys
                lastFetch = fetched.started
            }
        case .failure(let error):
            // A failed fetch is not throttled: the coalescing above keeps at most one request in flight.
            throw .jwksUnavailable(reason: String(describing: error))
        }
    }

    /// The result of one fetch of the key set.
    private struct FetchedKeys: Sendable {
        var keys: [String: P256.Signing.PublicKey]
        var started: Date
    }

    /// The keys of `keySet` that have a `kid` and are ES256 verification keys; others (for example RSA keys in a
    /// shared key set) are skipped.
    private static func usableKeys(in keySet: JSONWebKeySet) -> [String: P256.Signing.PublicKey] {
        var keys: [String: P256.Signing.PublicKey] = [:]
        for jwk in keySet.keys {
            guard let keyID = jwk.kid, let key = try? jwk.p256SigningKey() else { continue }
            keys[keyID] = key
        }
        return keys
    }
}
