import Crypto

/// A JSON Web Key (RFC 7517) as Verity publishes it: the public half of an ES256 signing key, an elliptic-curve
/// P-256 point (RFC 7518 §6.2).
///
/// Decoding is tolerant: every member other than `kty` is optional, so a key set that also holds keys of other types
/// decodes, and ``p256SigningKey()`` decides whether a key is usable. Encoding omits members that are `nil`.
public struct JSONWebKey: Codable, Sendable, Equatable, Hashable {
    /// The key type (`kty`); `"EC"` for the keys Verity uses.
    public var kty: String
    /// The curve (`crv`); `"P-256"` for the keys Verity uses.
    public var crv: String?
    /// The x coordinate of the point, 32 bytes big-endian, unpadded base64url.
    public var x: String?
    /// The y coordinate of the point, 32 bytes big-endian, unpadded base64url.
    public var y: String?
    /// The key identifier (`kid`), matched against the `kid` header of a token.
    public var kid: String?
    /// The algorithm the key is for (`alg`); `"ES256"` for the keys Verity uses.
    public var alg: String?
    /// The intended use (`use`); `"sig"` (signatures) for the keys Verity uses.
    public var use: String?

    /// Creates a key from its members.
    ///
    /// - Parameters:
    ///   - kty: The key type.
    ///   - crv: The curve, or `nil` to omit it.
    ///   - x: The base64url x coordinate, or `nil` to omit it.
    ///   - y: The base64url y coordinate, or `nil` to omit it.
    ///   - kid: The key identifier, or `nil` to omit it.
    ///   - alg: The algorithm, or `nil` to omit it.
    ///   - use: The intended use, or `nil` to omit it.
    public init(
        kty: String,
        crv: String? = nil,
        x: String? = nil,
        y: String? = nil,
        kid: String? = nil,
        alg: String? = nil,
        use: String? = nil
    ) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.kid = kid
        self.alg = alg
        self.use = use
    }

    /// Creates the JWK of a P-256 public key, for verifying ES256 signatures: `kty` `"EC"`, `crv` `"P-256"`,
    /// `alg` `"ES256"`, `use` `"sig"`.
    ///
    /// - Parameters:
    ///   - publicKey: The public key.
    ///   - keyID: The key identifier (`kid`) tokens signed with the matching private key carry.
    public init(publicKey: P256.Signing.PublicKey, keyID: String) {
        // The X9.63 form is 0x04 || x || y, each coordinate 32 bytes big-endian.
        let point = Array(publicKey.x963Representation)
        self.init(
            kty: Self.ellipticCurveKeyType,
            crv: Self.p256Curve,
            x: Base64URL.encode(point[1..<33]),
            y: Base64URL.encode(point[33..<65]),
            kid: keyID,
            alg: CompactJWS.algorithm,
            use: Self.signatureUse
        )
    }

    /// Converts the key to a P-256 public key for verifying ES256 signatures.
    ///
    /// - Returns: The public key.
    /// - Throws: ``JSONWebKeyError`` if `kty` is not `"EC"`, `crv` is not `"P-256"`, `alg` or `use` is present but
    ///   not `"ES256"` or `"sig"`, a coordinate is missing, not base64url or not 32 bytes, or the point is not on the
    ///   curve.
    public func p256SigningKey() throws(JSONWebKeyError) -> P256.Signing.PublicKey {
        guard kty == Self.ellipticCurveKeyType else { throw .unsupportedKeyType(kty) }
        guard crv == Self.p256Curve else { throw .unsupportedCurve(crv) }
        if let alg, alg != CompactJWS.algorithm { throw .unsupportedAlgorithm(alg) }
        if let use, use != Self.signatureUse { throw .unsupportedUse(use) }
        let xBytes = try Self.coordinate(x, named: "x")
        let yBytes = try Self.coordinate(y, named: "y")
        do {
            return try P256.Signing.PublicKey(x963Representation: [0x04] + xBytes + yBytes)
        } catch {
            throw .invalidPoint
        }
    }

    private static let ellipticCurveKeyType = "EC"
    private static let p256Curve = "P-256"
    private static let signatureUse = "sig"

    private static func coordinate(_ text: String?, named name: String) throws(JSONWebKeyError) -> [UInt8] {
        guard let text else { throw .missingCoordinate(name) }
        guard let bytes = Base64URL.decode(text), bytes.count == 32 else { throw .invalidCoordinate(name) }
        return bytes
    }
}
