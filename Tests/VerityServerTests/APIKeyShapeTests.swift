import Foundation
import Testing

@testable import VerityServer

/// The key-shape guard (`vk_`, at most 128 characters) is one check inside the key lookup, so every face that takes
/// an API key keeps it; the Firebase admin face had none.
@Suite("API-key shape on every face")
struct APIKeyShapeTests {
    @Test(
        "A secret not of a key's shape is refused on every face, even when a key with its hash is stored",
        arguments: TestEngine.available)
    func refusedEverywhere(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        _ = try await FirebaseFaceTests.named(node)
        let pid = node.project.id
        let misshapen = ["owner-\(UUID().uuidString)", "vk_" + String(repeating: "a", count: 126)]
        // A row made by an operator's own SQL, or a key from another system: the test-only way to store a secret
        // that Verity never issues.
        for (index, secret) in misshapen.enumerated() {
            try await node.verity.admin.insertKey(
                APIKey(
                    id: "key_misshapen\(index)", projectId: pid, name: "misshapen", prefix: String(secret.prefix(10)),
                    createdAt: node.clock.now(), revokedAt: nil),
                secretHash: SecretHash.hex(secret))
        }
        try await node.run { client in
            for secret in misshapen {
                let native = try await client.send(.get, "/v1/verifications/ver_nothing", key: secret)
                #expect(native.status == .unauthorized)
                let twilio = try await client.twilio(
                    .get, "/Services",
                    auth: TwilioAuth(accountSid: try #require(TwilioSID.account(forProject: pid)), secret: secret))
                #expect(twilio.status == .unauthorized)
                let descope = try await client.descope("/v1/mgmt/role/all", method: .get, bearer: "\(pid):\(secret)")
                #expect(descope.status == .unauthorized)
                let firebase = try await client.send(
                    .post, "/identitytoolkit.googleapis.com/v1/projects/acme-app/accounts:lookup", key: secret,
                    json: #"{"localId":["usr_nobody"]}"#)
                #expect(firebase.status == .unauthorized)
            }
        }
    }
}
