import Crypto
import Foundation
import Logging
import VerityCore

/// Each project's session signing keys: ES256 keys sealed at rest, rotated on demand, published as a JWKS.
///
/// A rotation publishes the new key at once but signs with it only ``activationDelay`` later, so verifiers that
/// refetch the JWKS at most once a minute (VerityJWT does) know it before they meet it; the old key goes on signing
/// until then and stays published for ``retiredKeyPublication`` after, longer than any token it signed lives.
public struct SigningKeyService: Sendable, UsesRuntime {
    /// How long after a rotation the new key starts signing.
    public static let activationDelay: TimeInterval = 120
    /// How long a retired key stays in the JWKS: the longest session lifetime a project may set, plus an hour for
    /// verifiers' clock leeway, so that the last token the key signed expires before the key leaves.
    public static let retiredKeyPublication = TimeInterval(ProjectSettings.sessionLifetimeRange.upperBound) + 3600

    private let store: SigningKeyStore
    let sealer: SecretSealer
    let runtime: Runtime

    init(
        store: SigningKeyStore, sealer: SecretSealer, runtime: Runtime
    ) {
        self.store = store
        self.sealer = sealer
        self.runtime = runtime
    }
    /// What this node last read of each project's keys.
    let cache = SigningKeyCache()

    /// Signs `payload` (the JSON claims) as a compact JWS with the project's current key, creating the project's
    /// first key if it has none.
    func sign(_ payload: [UInt8], projectId: String) async throws -> String {
        let now = clock.now()
        var entry = try await entry(projectId: projectId, now: now)
        if entry.current == nil {
            try await addKey(projectId: projectId, now: now)
            entry = try await read(projectId: projectId, now: now)
        }
        guard let (record, key) = entry.current else { throw VerityError(.internalError, "No signing key.") }
        return try CompactJWS.sign(payload: payload, keyID: record.id, type: "JWT", using: key)
    }

    /// The public key `kid` of the project's published keys, or nil when it has none by that id.
    func verifyingKey(_ kid: String, projectId: String) async throws -> P256.Signing.PublicKey? {
        let now = clock.now()
        if let key = try await entry(projectId: projectId, now: now).published[kid] { return key }
        // A key this node has not seen yet (another node's first key, say): read again before saying no.
        return try await read(projectId: projectId, now: now).published[kid]
    }

    /// The project's keys, from the cache while its entry is fresh.
    private func entry(projectId: String, now: Date) async throws -> SigningKeyCache.Entry {
        if let entry = cache.entry(projectId: projectId, now: now) { return entry }
        return try await read(projectId: projectId, now: now)
    }

    /// Reads the project's keys from the store, unseals the current one and keeps them in the cache.
    private func read(projectId: String, now: Date) async throws -> SigningKeyCache.Entry {
        let published = try await store.published(
            projectId: projectId, retiredAfter: now.addingTimeInterval(-Self.retiredKeyPublication))
        var entry = SigningKeyCache.Entry(current: nil, published: [:], readAt: now)
        for record in published {
            entry.published[record.id] = try P256.Signing.PublicKey(
                derRepresentation: Data(base64Encoded: record.publicKey) ?? Data())
        }
        if let record = try await store.current(projectId: projectId, now: now) {
            entry.current = (
                record,
                try P256.Signing.PrivateKey(
                    rawRepresentation: try sealer.open(record.sealedPrivateKey, context: record.id))
            )
        }
        cache.keep(entry, projectId: projectId)
        return entry
    }

    /// Adds a new key: published now, signing after ``activationDelay`` (at once if it is the project's first).
    /// - Returns: The new public key.
    @discardableResult
    public func rotate(projectId: String) async throws -> JSONWebKey {
        let record = try await addKey(projectId: projectId, now: clock.now())
        cache.forget(projectId: projectId)
        logger.notice("Signing key rotated", metadata: ["project": "\(projectId)", "kid": "\(record.id)"])
        return try Self.publicKey(record)
    }

    /// The keys that verify the project's unexpired tokens, newest first.
    public func keySet(projectId: String) async throws -> JSONWebKeySet {
        let cutoff = clock.now().addingTimeInterval(-Self.retiredKeyPublication)
        return JSONWebKeySet(
            keys: try await store.published(projectId: projectId, retiredAfter: cutoff).map(Self.publicKey))
    }

    @discardableResult
    private func addKey(projectId: String, now: Date) async throws -> SigningKeyRecord {
        let key = P256.Signing.PrivateKey()
        let id = identifiers.make("sk")
        let record = SigningKeyRecord(
            id: id, projectId: projectId,
            sealedPrivateKey: try sealer.seal(Array(key.rawRepresentation), context: id),
            publicKey: key.publicKey.derRepresentation.base64EncodedString(), createdAt: now)
        try await store.insert(record, retiringOthersAt: now.addingTimeInterval(Self.activationDelay))
        return record
    }

    private static func publicKey(_ record: SigningKeyRecord) throws -> JSONWebKey {
        JSONWebKey(
            publicKey: try P256.Signing.PublicKey(derRepresentation: Data(base64Encoded: record.publicKey) ?? Data()),
            keyID: record.id)
    }
}
