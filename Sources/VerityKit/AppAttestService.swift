import Foundation

/// The device's App Attest service: a key in the Secure Enclave that Apple certifies as belonging to this app on a
/// genuine device, and assertions signed with it.
///
/// `DeviceCheckAppAttestService` is the real one, on Apple platforms; ``UnsupportedAppAttestService`` stands in
/// elsewhere, and tests inject a scripted one. Implementations throw ``AppAttestError`` for device failures, which
/// make ``VerityAppVerification`` fall back to the silent push.
public protocol AppAttestService: Sendable {
    /// Whether this device offers App Attest (not in the Simulator, not on devices without a Secure Enclave).
    var isSupported: Bool { get }

    /// Creates a new key and returns its identifier.
    ///
    /// - Throws: ``AppAttestError`` when the device cannot create one.
    func generateKey() async throws -> String

    /// Asks Apple to certify the key `keyId`, binding the server's challenge in `clientDataHash`.
    ///
    /// - Parameters:
    ///   - keyId: An identifier from ``generateKey()``.
    ///   - clientDataHash: The SHA-256 of the client data, which embeds the server's challenge.
    /// - Returns: The attestation object (CBOR) for the server.
    /// - Throws: ``AppAttestError`` when the key or Apple's service fails.
    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data

    /// Signs `clientDataHash` with the attested key `keyId`.
    ///
    /// - Parameters:
    ///   - keyId: The attested key's identifier.
    ///   - clientDataHash: The SHA-256 of the client data, which embeds the server's challenge.
    /// - Returns: The assertion object (CBOR) for the server.
    /// - Throws: ``AppAttestError`` when the key cannot sign (``AppAttestError/invalidKey`` when it is gone).
    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data
}

/// The ``AppAttestService`` of a platform without App Attest: it is never supported.
public struct UnsupportedAppAttestService: AppAttestService {
    /// Creates the service.
    public init() {}

    /// Always `false`.
    public var isSupported: Bool { false }

    /// Always throws ``AppAttestError/unsupported``.
    public func generateKey() async throws -> String {
        throw AppAttestError.unsupported
    }

    /// Always throws ``AppAttestError/unsupported``.
    public func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        throw AppAttestError.unsupported
    }

    /// Always throws ``AppAttestError/unsupported``.
    public func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        throw AppAttestError.unsupported
    }
}
