/// How a device's JWTs name their factor and bound their use: the one place where device protocols may differ,
/// as a parameter of the one rule in ``FactorService/authenticateDevice(token:dialect:)`` (signature by the factor's
/// key, a window of at most ten minutes that holds now). A face whose devices speak another protocol defines its
/// dialect beside its other translations.
struct DeviceTokenDialect: Sendable {
    /// The `cty` header a token must carry, if any.
    var contentType: String?
    /// The factor id a token's `kid` names, if it names one.
    var factorId: @Sendable (_ keyID: String) -> String?
    /// The `sub` a token signed by a factor must carry.
    var subject: @Sendable (FactorRecord) -> String?
    /// Whether each token carries a `jti` that may be used once. Only a protocol whose clients mint tokens without
    /// one may say no, and SECURITY.md names it.
    var isSingleUse: Bool

    /// VerityKit's: `kid` and `sub` are the factor id, the window is `iat`…`exp`, each `jti` is used once.
    static let verity = DeviceTokenDialect(
        contentType: nil, factorId: { $0 }, subject: { $0.id }, isSingleUse: true)
}
