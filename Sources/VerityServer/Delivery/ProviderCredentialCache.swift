import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import VerityCore
import _CryptoExtras

/// Caches a provider credential and mints a new one when it is due; concurrent callers share a single mint, so a burst
/// of notifications costs one token (APNs refuses tokens that change too often, Google rate-limits its token endpoint).
actor ProviderCredentialCache {
    private var current: ProviderCredential?
    private var pending: Task<ProviderCredential, any Error>?

    /// The cached credential while `now` is before its refresh time, otherwise the result of `mint`.
    func value(now: Date, mint: @escaping @Sendable () async throws -> ProviderCredential) async throws -> String {
        if let current, now < current.refreshAfter { return current.value }
        if let pending { return try await pending.value.value }
        let task = Task { try await mint() }
        pending = task
        defer { pending = nil }
        let credential = try await task.value
        current = credential
        return credential.value
    }

    /// Drops the cached credential if it is still `value`, so that the next request mints a new one. A credential
    /// minted meanwhile by another request is kept.
    func invalidate(_ value: String) {
        if current?.value == value { current = nil }
    }
}
