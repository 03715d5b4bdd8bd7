import Foundation
import Testing

@testable import VerityServer

/// Logout answers the same for a token that is unknown, so each face's logout takes from the client's bucket, as the
/// native API's always did: the rule lives in AuthService, not in one face.
@Suite("Logout limits on every face")
struct LogoutLimitTests {
    @Test("Descope's logout and logoutall are limited per client", arguments: TestEngine.available)
    func descope(engine: TestEngine) async throws {
        let node = try await TestNode.make(
            engine, configure: { $0.rateLimits.perClientAddress = RateLimitPolicy(capacity: 3, period: 3600) })
        let pid = node.project.id
        try await node.run { client in
            // The start and the verify take two of the three.
            let signedIn = try await DescopeFaceTests.signIn(
                DescopeFaceTests.email, method: "email", node: node, client: client)
            let refreshJwt = try #require(signedIn["refreshJwt"] as? String)
            let first = try await client.descope("/v1/auth/logoutall", bearer: "\(pid):\(refreshJwt)")
            #expect(first.status == .ok)
            for path in ["/v1/auth/logout", "/v1/auth/logoutall"] {
                let limited = try await client.descope(path, bearer: "\(pid):\(refreshJwt)")
                #expect(limited.status == .tooManyRequests, "\(path)")
                #expect(try limited.descopeError() == "E130429", "\(path)")
            }
        }
    }
}
