import Foundation
import Testing
import VerityCore
import VerityKit

@testable import VerityServer

/// VerityKit's platform seam answered by the software authenticator the server's tests use (WebAuthn written from
/// the spec), as the device's passkeys would answer `ASAuthorizationPlatformPublicKeyCredentialProvider`'s requests.
actor SoftwarePasskeys: PasskeyAuthenticator {
    private var authenticator = SoftwareAuthenticator(rpID: "localhost", origin: "http://localhost")

    func register(_ request: PasskeyRegistrationRequest) async throws -> PasskeyRegistration {
        let made = authenticator.register(challenge: Array(request.challenge), userHandle: request.userId)
        return PasskeyRegistration(
            credentialId: made.credentialID, clientDataJSON: made.clientDataJSON,
            attestationObject: made.attestationObject)
    }

    /// Signs with the credential the server allows, or, for a discoverable sign-in, the newest one it holds.
    func assert(_ request: PasskeyAssertionRequest) async throws -> PasskeyAssertion {
        guard let id = request.allowedCredentialIds.first ?? authenticator.credentialIDs.last else {
            throw PasskeyError.cancelled
        }
        let made = try authenticator.assert(challenge: Array(request.challenge), credentialID: id)
        return PasskeyAssertion(
            credentialId: made.credentialID, clientDataJSON: made.clientDataJSON,
            authenticatorData: made.authenticatorData, signature: made.signature, userHandle: made.userHandle ?? Data())
    }
}

/// Passkeys as an app sees them: VerityKit's `VerityPasskeys` over URLSession against a live server, its credentials
/// made by a software authenticator and verified by the server's relying party.
@Suite("Passkeys end to end")
struct PasskeyEndToEndTests {
    @Test(
        "Register after a code sign-in, then sign in with the passkey, named and discoverable",
        arguments: TestEngine.available)
    func registerAndSignIn(engine: TestEngine) async throws {
        try await LiveServer.run(engine) { server in
            _ = try await server.verity.admin.updateProject(id: server.projectId, name: nil) {
                var passkeys = PasskeySettings(rpID: "localhost", rpName: "Acme", origins: ["http://localhost"])
                passkeys.userVerification = .required
                $0.passkeys = passkeys
            }
            let app = SessionEndToEndTests.app(server)
            let passkeys = VerityPasskeys(session: app, authenticator: SoftwarePasskeys())
            let phone = "+14155550142"
            let first = try await SessionEndToEndTests.signIn(app, phone, server: server)
            try await passkeys.register()

            await app.logout()
            let named = try await passkeys.signIn(loginId: phone)
            #expect(named.user.id == first.user.id)
            #expect(named.sessionId != first.sessionId)
            #expect(named.amr == ["hwk", "user"])
            #expect(await app.session?.sessionId == named.sessionId)
            #expect(named.acr == "mfa")

            await app.logout()
            let discovered = try await passkeys.signIn()
            #expect(discovered.user.id == first.user.id)
            #expect(discovered.amr == ["hwk", "user"])
        }
    }
}
