import Foundation

/// An `OSStatus` of the Keychain, or the code of a `SecKey` error.
struct KeychainStatus: Error, Sendable, Equatable {
    var code: Int32

    /// `errSecSuccess`.
    static let success = KeychainStatus(code: 0)
    /// `errSecItemNotFound`.
    static let itemNotFound = KeychainStatus(code: -25300)
    /// `errSecDuplicateItem`.
    static let duplicateItem = KeychainStatus(code: -25299)
    /// `errSecUserCanceled`, and `LAError.userCancel`, `.systemCancel` and `.appCancel` when signing.
    static let userCanceled = KeychainStatus(code: -128)
    /// `errSecAuthFailed`, and `LAError.authenticationFailed` when signing.
    static let authFailed = KeychainStatus(code: -25293)
}
