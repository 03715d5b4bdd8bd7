import Foundation
import Testing
import VerityCore
import VerityTestSupport

@testable import VerityServer

@Suite("Passkeys stored and listed")
struct PasskeyServiceTests {
    /// A node whose project has the test relying party on, and a user in it.
    static func node(_ engine: TestEngine) async throws -> (TestNode, Project, User) {
        let node = try await TestNode.make(engine)
        let change = try ProjectSettingsChange(PasskeyProjectSettingsTests.change)
        _ = try await node.verity.admin.updateProject(id: node.project.id, name: nil) { change.apply(to: &$0) }
        let project = try await node.verity.admin.project(id: node.project.id)
        let user = try await node.verity.users.create(
            CreateUserRequest(loginIds: ["ada@example.com"]), in: project)
        return (node, project, user)
    }

    static func code(of call: () async throws -> some Any) async -> ErrorCode? {
        do { _ = try await call() } catch let error as VerityError { return error.code } catch { return nil }
        return nil
    }

    @Test(
        "A registration answer is stored once, listed, excluded from the next options, renamed and deleted",
        arguments: TestEngine.available)
    func registerListRenameDelete(engine: TestEngine) async throws {
        let (node, project, user) = try await Self.node(engine)
        let passkeys = node.verity.passkeys
        var authenticator = SoftwareAuthenticator()
        let options = try await passkeys.registrationOptions(for: user, in: project)
        #expect(options.excludeCredentials.isEmpty)
        #expect(options.userVerification == .required)
        let registration = authenticator.register(challenge: options.challenge, userHandle: options.userHandle)
        let stored = try await passkeys.register(registration.answer, friendlyName: "Laptop", for: user, in: project)
        #expect(stored.credential.credentialID == registration.credentialID)
        // The challenge is spent: the same answer again is refused, and nothing more is stored.
        #expect(
            await Self.code {
                try await passkeys.register(registration.answer, friendlyName: nil, for: user, in: project)
            }
                == .challengeNotFound)
        #expect(try await passkeys.passkeys(userId: user.id, in: project).map(\.id) == [stored.id])

        let next = try await passkeys.registrationOptions(for: user, in: project)
        #expect(next.excludeCredentials.map(\.id) == [registration.credentialID])
        try await passkeys.rename(id: stored.id, userId: user.id, to: "  Work laptop ", in: project)
        #expect(try await passkeys.passkeys(userId: user.id, in: project).map(\.friendlyName) == ["Work laptop"])
        try await passkeys.delete(id: stored.id, userId: user.id, in: project)
        #expect(try await passkeys.passkeys(userId: user.id, in: project).isEmpty)
        #expect(
            await Self.code { try await passkeys.delete(id: stored.id, userId: user.id, in: project) }
                == .factorNotFound)
    }

    @Test(
        "A registration is refused for an unissued challenge, another user's challenge, and a wrong origin",
        arguments: TestEngine.available)
    func registrationRefusals(engine: TestEngine) async throws {
        let (node, project, user) = try await Self.node(engine)
        let passkeys = node.verity.passkeys
        let other = try await node.verity.users.create(CreateUserRequest(loginIds: ["bob@example.com"]), in: project)
        var authenticator = SoftwareAuthenticator()
        let unissued = authenticator.register(challenge: Array(repeating: 7, count: 32), userHandle: Data())
        #expect(
            await Self.code { try await passkeys.register(unissued.answer, friendlyName: nil, for: user, in: project) }
                == .challengeNotFound)

        let othersOptions = try await passkeys.registrationOptions(for: other, in: project)
        let stolen = authenticator.register(challenge: othersOptions.challenge, userHandle: othersOptions.userHandle)
        #expect(
            await Self.code { try await passkeys.register(stolen.answer, friendlyName: nil, for: user, in: project) }
                == .challengeNotFound)

        var foreign = SoftwareAuthenticator(origin: "https://evil.example.net")
        let options = try await passkeys.registrationOptions(for: user, in: project)
        let wrongOrigin = foreign.register(challenge: options.challenge, userHandle: options.userHandle)
        #expect(
            await Self.code {
                try await passkeys.register(wrongOrigin.answer, friendlyName: nil, for: user, in: project)
            }
                == .forbidden)
        #expect(try await passkeys.passkeys(userId: user.id, in: project).isEmpty)
    }
}

@Suite("Passkey sign-in in the Domain")
struct PasskeySignInTests {
    @Test(
        "A sign-in with and without a login id passes once; a replay, a flipped signature bit, another user's credential and a counter regression are refused",
        arguments: TestEngine.available)
    func signIn(engine: TestEngine) async throws {
        let (node, project, user) = try await PasskeyServiceTests.node(engine)
        let passkeys = node.verity.passkeys
        let other = try await node.verity.users.create(CreateUserRequest(loginIds: ["bob@example.com"]), in: project)
        var authenticator = SoftwareAuthenticator()
        let created = try await passkeys.registrationOptions(for: user, in: project)
        let registration = authenticator.register(challenge: created.challenge, userHandle: created.userHandle)
        _ = try await passkeys.register(registration.answer, friendlyName: nil, for: user, in: project)
        let id = registration.credentialID

        let named = try await passkeys.authenticationOptions(userId: user.id, in: project)
        #expect(named.allowCredentials.map(\.id) == [id])
        let assertion = try authenticator.assert(challenge: named.challenge, credentialID: id)
        let signedIn = try await passkeys.authenticate(assertion.answer, in: project)
        #expect(signedIn.passkey.userId == user.id)
        #expect(signedIn.assertion.amr == ["hwk", "user"])
        #expect(
            await PasskeyServiceTests.code { try await passkeys.authenticate(assertion.answer, in: project) }
                == .challengeNotFound)

        let discoverable = try await passkeys.authenticationOptions(userId: nil, in: project)
        #expect(discoverable.allowCredentials.isEmpty)
        var flipped = try authenticator.assert(challenge: discoverable.challenge, credentialID: id).answer
        flipped.signature[flipped.signature.count / 2] ^= 1
        #expect(
            await PasskeyServiceTests.code { try await passkeys.authenticate(flipped, in: project) }
                == .invalidSignature)
        let anyone = try await passkeys.authenticationOptions(userId: nil, in: project)
        let found = try await passkeys.authenticate(
            try authenticator.assert(challenge: anyone.challenge, credentialID: id).answer, in: project)
        #expect(found.passkey.userId == user.id)

        let forOther = try await passkeys.authenticationOptions(userId: other.id, in: project)
        let stolen = try authenticator.assert(challenge: forOther.challenge, credentialID: id)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.authenticate(stolen.answer, in: project) }
                == .wrongFactor)

        let counted = try await passkeys.passkeys(userId: user.id, in: project).first?.credential.signCount
        #expect((counted ?? 0) > 1)
        authenticator.counter = 1
        let again = try await passkeys.authenticationOptions(userId: user.id, in: project)
        let regressed = try authenticator.assert(challenge: again.challenge, credentialID: id)
        #expect(
            await PasskeyServiceTests.code { try await passkeys.authenticate(regressed.answer, in: project) }
                == .forbidden)
        #expect(try await passkeys.passkeys(userId: user.id, in: project).first?.credential.signCount == counted)
        let events = try await node.verity.sessions.securityEvents(userId: user.id, limit: nil, in: project)
        #expect(events.items.map(\.type) == ["passkey_counter_regressed"])
    }
}
