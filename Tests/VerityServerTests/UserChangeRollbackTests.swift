import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// A management call that changes a user in several steps (the user, its roles, its status, its sessions) is one
/// unit of work: a failure injected at a later step leaves nothing of the earlier ones, seen through the face that
/// made the call.
@Suite("A failure inside a multi-step user change leaves nothing behind")
struct UserChangeRollbackTests {
    /// A node whose project has the role `admin`, and the bearer value of Descope's management calls to it.
    static func managedNode(_ engine: TestEngine) async throws -> (TestNode, String) {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.roles.create(CreateRoleRequest(name: "admin"), in: node.project)
        return (node, "\(node.project.id):\(node.apiKey)")
    }

    @Test(
        "Descope createUser: the user is written, its role grant fails; no user is left",
        arguments: TestEngine.available)
    func descopeCreate(engine: TestEngine) async throws {
        let (node, bearer) = try await Self.managedNode(engine)
        try await node.run { client in
            try await node.injectFailure(of: "INSERT", on: "user_roles", engine: engine)
            let failed = try await client.descope(
                "/v1/mgmt/user/create", bearer: bearer,
                json: #"{"loginId":"bob@example.com","displayName":"Bob","roleNames":["admin"],"status":"disabled"}"#)
            #expect(failed.status.code >= 500)
            try await node.removeInjectedFailure(on: "user_roles", engine: engine)

            let none = try await client.descope("/v1/mgmt/user?loginId=bob@example.com", method: .get, bearer: bearer)
            #expect(try none.descopeError() == "E062108")
            // The login id is free: the same call now makes the user, with its role and status.
            let created = try await client.descope(
                "/v1/mgmt/user/create", bearer: bearer,
                json: #"{"loginId":"bob@example.com","displayName":"Bob","roleNames":["admin"],"status":"disabled"}"#)
            let user = try #require(try created.json()["user"] as? [String: Any])
            #expect(user["roleNames"] as? [String] == ["admin"])
            #expect(user["status"] as? String == "disabled")
        }
    }

    @Test(
        "Descope updateUser: the name changes, the role grant fails; the user is as it was",
        arguments: TestEngine.available)
    func descopeUpdate(engine: TestEngine) async throws {
        let (node, bearer) = try await Self.managedNode(engine)
        try await node.run { client in
            let created = try await client.descope(
                "/v1/mgmt/user/create", bearer: bearer,
                json: #"{"loginId":"bob@example.com","phone":"+14155550123","displayName":"Bob","roleNames":[]}"#)
            #expect(created.status == .ok)
            try await node.injectFailure(of: "INSERT", on: "user_roles", engine: engine)
            let failed = try await client.descope(
                "/v1/mgmt/user/update", bearer: bearer,
                json: #"{"loginId":"bob@example.com","displayName":"Robert","roleNames":["admin"]}"#)
            #expect(failed.status.code >= 500)
            try await node.removeInjectedFailure(on: "user_roles", engine: engine)

            let loaded = try await client.descope(
                "/v1/mgmt/user?loginId=bob@example.com", method: .get, bearer: bearer)
            let user = try #require(try loaded.json()["user"] as? [String: Any])
            #expect(user["name"] as? String == "Bob")
            #expect(user["roleNames"] as? [String] == [])
            #expect(user["loginIds"] as? [String] == ["bob@example.com", "+14155550123"])
        }
    }

    @Test(
        "Firebase admin update: name and disabling are written, ending the sessions fails; the user and its session stay",
        arguments: TestEngine.available)
    func firebaseUpdate(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let link = try await FirebaseFaceTests.named(node)
        try await node.run { client in
            let signedIn = try await FirebaseFaceTests.signIn(
                FirebaseFaceTests.phone, key: link.apiKey, node: node, client: client)
            let uid = try #require(signedIn["localId"] as? String)
            let before = try await node.verity.users.user(id: uid, in: node.project)
            try await node.injectFailure(of: "UPDATE", on: "sessions", engine: engine)
            let failed = try await client.send(
                .post, "/identitytoolkit.googleapis.com/v1/projects/acme-app/accounts:update", key: node.apiKey,
                json: #"{"localId":"\#(uid)","displayName":"Joan","disableUser":true,"validSince":"1"}"#)
            #expect(failed.status.code >= 500)
            try await node.removeInjectedFailure(on: "sessions", engine: engine)

            #expect(try await node.verity.users.user(id: uid, in: node.project) == before)
            let refresh = try await client.firebase(
                FirebaseFaceTests.token, key: link.apiKey,
                json:
                    #"{"grantType":"refresh_token","refreshToken":"\#(try #require(signedIn["refreshToken"] as? String))"}"#
            )
            #expect(refresh.status == .ok)
        }
    }
}
