import Foundation
import Testing
import VerityCore

@testable import VerityServer

@Suite("Passkey ceremonies of a face's transaction")
struct PasskeyCeremonyContextTests {
    @Test(
        "A challenge bound to a transaction is found by its answer, spent by that transaction only, and left for it when another ceremony tries it",
        arguments: TestEngine.available)
    func transactionBinding(engine: TestEngine) async throws {
        let (node, project, user) = try await PasskeyServiceTests.node(engine)
        let passkeys = node.verity.passkeys
        var authenticator = SoftwareAuthenticator()
        let created = try await passkeys.registrationOptions(for: user, in: project)
        let registration = authenticator.register(challenge: created.challenge, userHandle: created.userHandle)
        _ = try await passkeys.register(registration.answer, friendlyName: nil, for: user, in: project)

        let face = PasskeyCeremonyContext(transaction: "YC00000000000000000000000000000001")
        let options = try await passkeys.authenticationOptions(userId: user.id, in: project, context: face)
        let assertion = try authenticator.assert(challenge: options.challenge, credentialID: registration.credentialID)
        #expect(try await passkeys.transaction(answering: assertion.clientDataJSON, in: project) == face.transaction)

        // The native ceremony, and another transaction, cannot spend the face's challenge.
        #expect(
            await PasskeyServiceTests.code { try await passkeys.authenticate(assertion.answer, in: project) }
                == .challengeNotFound)
        let another = PasskeyCeremonyContext(transaction: "YC00000000000000000000000000000002")
        #expect(
            await PasskeyServiceTests.code {
                try await passkeys.authenticate(assertion.answer, in: project, context: another)
            } == .challengeNotFound)
        // Its own transaction still can, once.
        let signedIn = try await passkeys.authenticate(assertion.answer, in: project, context: face)
        #expect(signedIn.passkey.userId == user.id)
        #expect(try await passkeys.transaction(answering: assertion.clientDataJSON, in: project) == nil)
    }
}
