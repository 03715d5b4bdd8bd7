import Crypto

/// A JSON Web Key Set (RFC 7517 §5): `{"keys": [...]}`, the document served at
/// `GET /v1/projects/{projectId}/.well-known/jwks.json`.
public struct JSONWebKeySet: Codable, Sendable, Equatable, Hashable {
    /// The keys, in no particular order.
    public var keys: [JSONWebKey]

    /// Creates a key set.
    ///
    /// - Parameter keys: The keys.
    public init(keys: [JSONWebKey]) {
        self.keys = keys
    }

    /// The first key whose `kid` is `keyID`, or `nil` if there is none.
    ///
    /// - Parameter keyID: The key identifier to look for.
    public func key(withID keyID: String) -> JSONWebKey? {
        keys.first { $0.kid == keyID }
    }
}
