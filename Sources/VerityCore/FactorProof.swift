import Foundation

/// The JSON payload of the compact JWS that proves key possession at enrollment.
public struct FactorProof: Codable, Sendable, Equatable {
    public var factorId: String
    public var nonce: String

    public init(factorId: String, nonce: String) {
        self.factorId = factorId
        self.nonce = nonce
    }
}
