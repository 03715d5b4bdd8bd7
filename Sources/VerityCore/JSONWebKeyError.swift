import Crypto

/// Why a ``JSONWebKey`` cannot be used as an ES256 verification key.
public enum JSONWebKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key type (`kty`) is not `"EC"`.
    case unsupportedKeyType(String)
    /// The curve (`crv`) is missing or not `"P-256"`.
    case unsupportedCurve(String?)
    /// The key declares an algorithm (`alg`) other than `"ES256"`.
    case unsupportedAlgorithm(String)
    /// The key declares a use other than `"sig"`.
    case unsupportedUse(String)
    /// The named coordinate (`"x"` or `"y"`) is missing.
    case missingCoordinate(String)
    /// The named coordinate is not unpadded base64url of exactly 32 bytes.
    case invalidCoordinate(String)
    /// The coordinates do not name a point on the P-256 curve.
    case invalidPoint

    /// A human-readable explanation of the error.
    public var description: String {
        switch self {
        case .unsupportedKeyType(let kty): "The key type \"\(kty)\" is not supported; expected \"EC\"."
        case .unsupportedCurve(let crv): "The curve \"\(crv ?? "")\" is not supported; expected \"P-256\"."
        case .unsupportedAlgorithm(let alg): "The key algorithm \"\(alg)\" is not supported; expected \"ES256\"."
        case .unsupportedUse(let use): "The key use \"\(use)\" is not supported; expected \"sig\"."
        case .missingCoordinate(let name): "The key has no \"\(name)\" coordinate."
        case .invalidCoordinate(let name): "The \"\(name)\" coordinate is not 32 bytes of base64url."
        case .invalidPoint: "The coordinates are not a point on the P-256 curve."
        }
    }
}
