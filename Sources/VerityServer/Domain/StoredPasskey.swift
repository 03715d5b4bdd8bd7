import Foundation

/// What the relying party keeps of a credential to check later assertions.
struct StoredPasskey: Sendable, Equatable {
    /// The credential id.
    var credentialID: Data
    /// The COSE_Key exactly as the authenticator sent it.
    var publicKeyCBOR: Data
    /// The last signature counter seen.
    var signCount: UInt32
    /// The BE flag seen at registration; it never changes for a credential.
    var backupEligible: Bool
}
