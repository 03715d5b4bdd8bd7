import Foundation

/// The answer to enrolling a push factor: the factor, and the nonce the device signs to prove it holds the key.
public struct EnrolledPushFactor: Codable, Sendable, Equatable {
    public var factor: Factor
    /// Sign ``FactorProof`` with this nonce and send it to `POST /v1/device/factors/{id}/verify`.
    public var nonce: String

    public init(factor: Factor, nonce: String) {
        self.factor = factor
        self.nonce = nonce
    }
}
