import Foundation

/// `POST /v1/device/factors/{id}/verify`: `signature` is a compact ES256 JWS over a ``FactorProof``.
public struct VerifyPushFactorRequest: Codable, Sendable {
    public var signature: String

    public init(signature: String) {
        self.signature = signature
    }
}
