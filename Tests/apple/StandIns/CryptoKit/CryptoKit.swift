// A stand-in for the part of Apple's CryptoKit that swift-crypto does not offer: whether there is a Secure Enclave.
// On Apple platforms swift-crypto's `Crypto` re-exports CryptoKit, so `P256` is one type for both imports; here this
// module re-exports `Crypto` to give the same. Never ships, never runs.
@_exported import Crypto

// https://developer.apple.com/documentation/cryptokit/secureenclave: `enum SecureEnclave`
public enum SecureEnclave {
    // https://developer.apple.com/documentation/cryptokit/secureenclave/isavailable: `static var isAvailable: Bool
    // { get }`
    public static var isAvailable: Bool {
        fatalError("CryptoKit stand-in: type-checking only")
    }
}
