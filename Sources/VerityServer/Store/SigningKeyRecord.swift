import Foundation
import SQLKit

/// A project's session signing keys, as stored: the private key sealed, the public key in base64 DER.
struct SigningKeyRecord: Sendable, Equatable {
    var id: String
    var projectId: String
    var sealedPrivateKey: String
    var publicKey: String
    var createdAt: Date
    var retiredAt: Date?
}
