import Foundation
import VerityCore

/// A passkey the platform created, as its authenticator answered.
public struct PasskeyRegistration: Sendable, Equatable {
    /// The credential id.
    public var credentialId: Data
    /// The client data JSON, as the platform made it.
    public var clientDataJSON: Data
    /// The attestation object (CBOR).
    public var attestationObject: Data
    /// Whether the authenticator is the device's own (`true`) or another one, a security key or a phone nearby.
    public var isPlatformAttachment: Bool

    /// Creates a registration.
    ///
    /// - Parameters:
    ///   - credentialId: The credential id.
    ///   - clientDataJSON: The client data JSON.
    ///   - attestationObject: The attestation object.
    ///   - isPlatformAttachment: Whether the authenticator is the device's own.
    public init(credentialId: Data, clientDataJSON: Data, attestationObject: Data, isPlatformAttachment: Bool = true) {
        self.credentialId = credentialId
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.isPlatformAttachment = isPlatformAttachment
    }

    /// The standard JSON serialisation of the `PublicKeyCredential` (`RegistrationResponseJSON`).
    var json: WebAuthnJSON.Credential<WebAuthnJSON.AttestationResponse> {
        WebAuthnJSON.Credential(
            credentialId: credentialId,
            response: WebAuthnJSON.AttestationResponse(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                attestationObject: Base64URL.encode(attestationObject),
                transports: isPlatformAttachment ? ["internal", "hybrid"] : []),
            isPlatformAttachment: isPlatformAttachment)
    }
}
