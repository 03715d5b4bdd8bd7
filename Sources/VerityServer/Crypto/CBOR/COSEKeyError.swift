/// Why a COSE_Key (RFC 9052 §7, RFC 9053) could not be turned into a public key.
enum COSEKeyError: Error, Sendable, Hashable {
    /// The key is not well-formed CBOR.
    case malformed(CBORError)
    /// The key is not a map, or a parameter it needs is missing or of the wrong type.
    case missingParameter(label: Int)
    /// A key type, curve or algorithm outside ES256, EdDSA (Ed25519) and RS256.
    case unsupportedAlgorithm
    /// The parameters name a supported algorithm but the key material is not a valid key (a point off the curve, a
    /// short RSA modulus).
    case invalidKey
}
