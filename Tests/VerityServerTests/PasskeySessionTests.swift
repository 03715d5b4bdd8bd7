import Foundation
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Passkey sessions and step-up in the Domain")
struct PasskeySessionTests {
    /// A node whose project asks for (but does not require) user verification, a user in it, and their passkey.
    static func registered(_ engine: TestEngine) async throws
        -> (node: TestNode, project: Project, user: User, authenticator: SoftwareAuthenticator, credentialID: Data)
    {
        let node = try await TestNode.make(engine)
        let change = try ProjectSettingsChange(
            PasskeyProjectSettingsTests.change.merging([.passkeyUserVerification: "preferred"]) { $1 })
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        let project = try await node.verity.admin.project(id: node.project.id)
        let user = try await node.verity.users.create(CreateUserRequest(loginIds: ["ada@example.com"]), in: project)
        var authenticator = SoftwareAuthenticator()
        let options = try await node.verity.passkeys.registrationOptions(for: user, in: project)
        let registration = authenticator.register(challenge: options.challenge, userHandle: options.userHandle)
        _ = try await node.verity.passkeys.register(registration.answer, friendlyName: nil, for: user, in: project)
        return (node, project, user, authenticator, registration.credentialID)
    }

    @Test(
        "A passkey sign-in opens a session whose amr and acr are the assertion's, spends its challenge, and refuses a disabled user",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        var (node, project, user, authenticator, id) = try await Self.registered(engine)
        let passkeys = node.verity.passkeys
        let options = try await passkeys.authenticationOptions(userId: nil, in: project)
        let assertion = try authenticator.assert(challenge: options.challenge, credentialID: id)
        let signedIn = try await passkeys.signIn(assertion.answer, in: project)
        #expect(signedIn.user.id == user.id && !signedIn.firstSeen && signedIn.refreshToken != nil)
        let auth = try await node.verity.sessions.authenticate(bearer: signedIn.sessionJwt, in: project)
        let me = try await node.verity.sessions.me(auth, in: project)
        #expect(me.amr == ["hwk", "user"] && me.acr == "mfa")
        #expect(
            await PasskeyServiceTests.code { try await passkeys.signIn(assertion.answer, in: project) }
                == .challengeNotFound)

        _ = try await node.verity.accounts.setDisabled(true, id: user.id, in: project)
        let later = try await passkeys.authenticationOptions(userId: user.id, in: project)
        let disabled = try authenticator.assert(challenge: later.challenge, credentialID: id)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.signIn(disabled.answer, in: project) } == .userDisabled)
        #expect(try await node.verity.sessions.activeSessions(userId: user.id, in: project).isEmpty)
    }

    @Test(
        "A step-up by the user's own passkey adds its amr and acr mfa to the session; another user's challenge or passkey is refused",
        arguments: TestEngine.available)
    func stepUp(engine: TestEngine) async throws {
        var (node, project, user, authenticator, id) = try await Self.registered(engine)
        let passkeys = node.verity.passkeys
        let sessions = node.verity.sessions
        authenticator.userVerified = false
        let options = try await passkeys.authenticationOptions(userId: user.id, in: project)
        let signedIn = try await passkeys.signIn(
            try authenticator.assert(challenge: options.challenge, credentialID: id).answer, in: project)
        let auth = try await sessions.authenticate(bearer: signedIn.sessionJwt, in: project)
        #expect(auth.session.amr == ["hwk"] && auth.session.acr == nil)

        // Bob and his passkey: neither his step-up challenge nor his passkey steps Ada's session up.
        let bob = try await node.verity.users.create(CreateUserRequest(loginIds: ["bob@example.com"]), in: project)
        var bobs = SoftwareAuthenticator()
        let created = try await passkeys.registrationOptions(for: bob, in: project)
        let bobsRegistration = bobs.register(challenge: created.challenge, userHandle: created.userHandle)
        _ = try await passkeys.register(bobsRegistration.answer, friendlyName: nil, for: bob, in: project)
        let bobsKey = bobsRegistration.credentialID
        let bobsSignIn = try await passkeys.authenticationOptions(userId: bob.id, in: project)
        let bobsAuth = try await sessions.authenticate(
            bearer: try await passkeys.signIn(
                try bobs.assert(challenge: bobsSignIn.challenge, credentialID: bobsKey).answer, in: project
            ).sessionJwt, in: project)
        let bobsChallenge = try await passkeys.stepUpOptions(for: bobsAuth, in: project)
        let onBobsChallenge = try bobs.assert(challenge: bobsChallenge.challenge, credentialID: bobsKey)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.stepUp(onBobsChallenge.answer, for: auth, in: project) }
                == .challengeNotFound)
        let adas = try await passkeys.stepUpOptions(for: auth, in: project)
        #expect(adas.allowCredentials.map(\.id) == [id])
        let bobsOnAdas = try bobs.assert(challenge: adas.challenge, credentialID: bobsKey)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.stepUp(bobsOnAdas.answer, for: auth, in: project) }
                == .wrongFactor)
        // A sign-in challenge is not a step-up's.
        let signInChallenge = try await passkeys.authenticationOptions(userId: user.id, in: project)
        authenticator.userVerified = true
        let wrongCeremony = try authenticator.assert(challenge: signInChallenge.challenge, credentialID: id)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.stepUp(wrongCeremony.answer, for: auth, in: project) }
                == .challengeNotFound)
        #expect(try await sessions.authenticate(bearer: signedIn.sessionJwt, in: project).session.amr == ["hwk"])

        let again = try await passkeys.stepUpOptions(for: auth, in: project)
        let stepped = try await passkeys.stepUp(
            try authenticator.assert(challenge: again.challenge, credentialID: id).answer, for: auth, in: project)
        #expect(stepped.refreshToken == nil)
        let after = try await sessions.authenticate(bearer: stepped.sessionJwt, in: project)
        #expect(after.session.id == auth.session.id)
        #expect(after.session.amr == ["hwk", "user"] && after.session.acr == "mfa")
    }
}
