import Foundation
import VerityCore

/// The standard JSON forms of WebAuthn (Level 3, §5.1 and §5.4: `PublicKeyCredentialCreationOptionsJSON`,
/// `PublicKeyCredentialRequestOptionsJSON`, and the JSON serialisation of a `PublicKeyCredential`), with binary
/// values in base64url. Only the members VerityKit reads or writes are here; others are ignored.
enum WebAuthnJSON {
    /// `PublicKeyCredentialCreationOptionsJSON`.
    struct CreationOptions: Decodable, Sendable {
        struct RelyingParty: Decodable, Sendable {
            let id: String?
            let name: String
        }

        struct User: Decodable, Sendable {
            let id: String
            let name: String
            let displayName: String
        }

        struct Parameters: Decodable, Sendable {
            let type: String
            let alg: Int
        }

        struct Selection: Decodable, Sendable {
            let authenticatorAttachment: String?
            let residentKey: String?
            let userVerification: String?
        }

        let rp: RelyingParty
        let user: User
        let challenge: String
        let pubKeyCredParams: [Parameters]
        let excludeCredentials: [Descriptor]?
        let authenticatorSelection: Selection?
        let attestation: String?
    }

    /// `PublicKeyCredentialRequestOptionsJSON`.
    struct RequestOptions: Decodable, Sendable {
        let challenge: String
        let rpId: String?
        let allowCredentials: [Descriptor]?
        let userVerification: String?
    }

    /// `PublicKeyCredentialDescriptorJSON`.
    struct Descriptor: Decodable, Sendable {
        let type: String
        let id: String
    }

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
    static func credentialIds(_ descriptors: [Descriptor]?, _ member: String) throws -> [Data] {
        try (descriptors ?? []).filter { $0.type == publicKey }.map { try bytes($0.id, "\(member).id") }
    }
}
