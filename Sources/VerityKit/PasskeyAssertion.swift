import Foundation
import VerityCore

/// A passkey's answer to a sign-in challenge, as the platform gave it.
public struct PasskeyAssertion: Sendable, Equatable {
    /// The credential id.
    public var credentialId: Data
    /// The client data JSON, as the platform made it.
    public var clientDataJSON: Data
    /// The authenticator data.
    public var authenticatorData: Data
    /// The signature over the authenticator data and the client data's hash.
    public var signature: Data
    /// The user handle the credential was created with; empty when the authenticator gave none.
    public var userHandle: Data
    /// Whether the authenticator is the device's own.
    public var isPlatformAttachment: Bool

    /// Creates an assertion.
    ///
    /// - Parameters:
    ///   - credentialId: The credential id.
    ///   - clientDataJSON: The client data JSON.
    ///   - authenticatorData: The authenticator data.
    ///   - signature: The signature.
    ///   - userHandle: The user handle, or empty.
    ///   - isPlatformAttachment: Whether the authenticator is the device's own.
    public init(
        credentialId: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data,
        isPlatformAttachment: Bool = true
    ) {
        self.credentialId = credentialId
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.isPlatformAttachment = isPlatformAttachment
    }

    /// The standard JSON serialisation of the `PublicKeyCredential` (`AuthenticationResponseJSON`).
    var json: WebAuthnJSON.Credential<WebAuthnJSON.AssertionResponse> {
        WebAuthnJSON.Credential(
            credentialId: credentialId,
            response: WebAuthnJSON.AssertionResponse(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                authenticatorData: Base64URL.encode(authenticatorData), signature: Base64URL.encode(signature),
                userHandle: userHandle.isEmpty ? nil : Base64URL.encode(userHandle)),
            isPlatformAttachment: isPlatformAttachment)
    }
}
