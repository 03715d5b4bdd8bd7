import Foundation
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// The hosted instant-link page: its path is a secret, and no other site may frame it.
@Suite("Instant-link page security")
struct InstantLinkPageSecurityTests {
    static let phone = "+14155550181"

    @Test("An unhandled error on the page logs the route, never the link's secret", arguments: TestEngine.available)
    func unhandledErrorLog(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let path = try await Self.linkPath(node: node, client: client)
            let token = String(path.dropFirst("/p/".count))
            try await node.verity.database.close()  // every look-up now fails with a database error
            let failed = try await client.send(.get, path, key: nil)
            #expect(failed.status == .internalServerError)
            let unhandled = node.logs.lines.filter { $0.contains("Unhandled error") }
            #expect(!unhandled.isEmpty)
            #expect(unhandled.allSatisfy { $0.contains("path=/p/:token") })
            #expect(!node.logs.text.contains(token))
        }
    }

    @Test("The page may not be framed by another site", arguments: TestEngine.available)
    func noFraming(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let path = try await Self.linkPath(node: node, client: client)
            for response in [
                try await client.send(.get, path, key: nil), try await client.send(.get, "/p/ver_unknown.x", key: nil),
            ] {
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("frame-ancestors 'none'"))
                #expect(response.headers[try #require(.init("X-Frame-Options"))] == "DENY")
            }
        }
    }

    static func linkPath(node: TestNode, client: some TestClientProtocol) async throws -> String {
        let flow = try await TestFlow.start(
            #"{"phoneNumber":"\#(phone)","flow":"desktop"}"#, node: node, client: client)
        #expect(try await flow.step("link/start", client: client).status == .ok)
        return try await flow.linkPath(to: phone)
    }
}
