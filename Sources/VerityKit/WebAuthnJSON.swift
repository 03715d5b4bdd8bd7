import Foundation
import VerityCore

/// The standard JSON forms of WebAuthn (Level 3, §5.1 and §5.4: `PublicKeyCredentialCreationOptionsJSON`,
/// `PublicKeyCredentialRequestOptionsJSON`, and the JSON serialisation of a `PublicKeyCredential`), with binary
/// values in base64url. The options are read with VerityCore's types, the ones the server writes them with; of a
/// credential, only the members VerityKit writes are here.
enum WebAuthnJSON {
    /// `PublicKeyCredentialCreationOptionsJSON`.
    typealias CreationOptions = PublicKeyCredentialCreationOptionsJSON

    /// `PublicKeyCredentialRequestOptionsJSON`.
    typealias RequestOptions = PublicKeyCredentialRequestOptionsJSON

    /// The JSON serialisation of a `PublicKeyCredential`: `RegistrationResponseJSON` with an
    /// ``AttestationResponse``, `AuthenticationResponseJSON` with an ``AssertionResponse``.
    struct Credential<Response: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
        let id: String
        let rawId: String
        let type: String
        let response: Response
        let authenticatorAttachment: String?
        let clientExtensionResults: [String: String]

        /// The credential `credentialId` with `response`, from the device's own authenticator or another one.
        init(credentialId: Data, response: Response, isPlatformAttachment: Bool) {
            id = Base64URL.encode(credentialId)
            rawId = id
            type = WebAuthnJSON.publicKey
            self.response = response
            authenticatorAttachment = isPlatformAttachment ? "platform" : "cross-platform"
            clientExtensionResults = [:]
        }
    }

    /// `AuthenticatorAttestationResponseJSON`.
    struct AttestationResponse: Encodable, Sendable, Equatable {
        let clientDataJSON: String
        let attestationObject: String
        let transports: [String]
    }

    /// `AuthenticatorAssertionResponseJSON`.
    struct AssertionResponse: Encodable, Sendable, Equatable {
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String
        let userHandle: String?
    }

    /// The credential type, the only one WebAuthn defines.
    static let publicKey = "public-key"
    /// The COSE algorithm of ES256, the one platform passkeys use.
    static let es256 = -7

    /// The bytes of a base64url member, or a mapping error naming it.
    static func bytes(_ text: String, _ member: String) throws -> Data {
        guard let bytes = Base64URL.decode(text) else {
            throw VerityKitError.mapping("The passkey options' \(member) is not base64url.")
        }
        return Data(bytes)
    }

    /// The ids of a descriptor list's public-key credentials.
    static func credentialIds(_ descriptors: [PublicKeyCredentialDescriptorJSON]?, _ member: String) throws -> [Data] {
        try (descriptors ?? []).filter { $0.type == publicKey }.map { try bytes($0.id, "\(member).id") }
    }
}
