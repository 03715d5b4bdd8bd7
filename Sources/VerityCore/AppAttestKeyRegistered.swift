import Foundation

/// The answer to ``AppAttestKeyRequest``: the key is attested and kept; its assertions now prove the app.
public struct AppAttestKeyRegistered: Codable, Sendable, Equatable {
    /// The key id, as the app sent it.
    public var keyId: String

    public init(keyId: String) {
        self.keyId = keyId
    }
}
