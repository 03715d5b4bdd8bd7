import Foundation
import VerityCore

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4): the registration options as the native API
/// answers them, for `PublicKeyCredential.parseCreationOptionsFromJSON`. Binary fields are base64url.
struct PublicKeyCredentialCreationOptionsJSON: Encodable, Sendable {
    struct RelyingParty: Encodable, Sendable {
        var id: String
        var name: String
    }

    struct User: Encodable, Sendable {
        var id: String
        var name: String
        var displayName: String
    }

    struct Parameter: Encodable, Sendable {
        var type = "public-key"
        var alg: Int
    }

    struct Descriptor: Encodable, Sendable {
        var type = "public-key"
        var id: String
        var transports: [String]?

        init(_ descriptor: PasskeyCredentialDescriptor) {
            id = Base64URL.encode(descriptor.id)
            transports = descriptor.transports.isEmpty ? nil : descriptor.transports
        }
    }

    struct Selection: Encodable, Sendable {
        var authenticatorAttachment: String?
        var residentKey: String
        var requireResidentKey: Bool
        var userVerification: String
    }

    var rp: RelyingParty
    var user: User
    var challenge: String
    var pubKeyCredParams: [Parameter]
    /// Milliseconds, as WebAuthn counts them.
    var timeout: Int
    var excludeCredentials: [Descriptor]
    var authenticatorSelection: Selection
    var attestation: String

    init(_ options: PasskeyCreationOptions) {
        rp = RelyingParty(id: options.rpID, name: options.rpName)
        user = User(
            id: Base64URL.encode(options.userHandle), name: options.userName, displayName: options.userDisplayName)
        challenge = Base64URL.encode(options.challenge)
        pubKeyCredParams = options.algorithms.map { Parameter(alg: $0.rawValue) }
        timeout = options.timeout * 1000
        excludeCredentials = options.excludeCredentials.map(Descriptor.init)
        authenticatorSelection = Selection(
            authenticatorAttachment: options.attachment?.rawValue, residentKey: options.residentKey.rawValue,
            requireResidentKey: options.residentKey == .required, userVerification: options.userVerification.rawValue)
        attestation = options.attestation.rawValue
    }
}
