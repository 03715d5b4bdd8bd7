import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

/// A Descope project id the admin gives a project, which the face answers to in place of the Verity project id.
extension DescopeFaceTests {
    @Test(
        "A Descope project id: the bearer, the keys route and management take it, and the tokens name it as iss",
        arguments: TestEngine.available)
    func descopeProjectId(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let pid = node.project.id
        let alias = "P2AbcDEF123_x-y"
        _ = try await node.verity.admin.updateProject(id: pid, name: nil) { $0.descopeProjectId = alias }
        try await node.run { client in
            let verified = try await Self.verifyCode(
                Self.email, method: "email", project: alias, node: node, client: client)
            #expect(verified.status == .ok)
            let body = try verified.json()
            let refreshJwt = try #require(body["refreshJwt"] as? String)
            for token in [try #require(body["sessionJwt"] as? String), refreshJwt] {
                let claims = try await SessionAPITests.independentlyVerified(
                    token, client: client, project: node.project, keySet: "/descope/v2/keys/\(alias)")
                #expect(claims["iss"] as? String == alias)
                #expect(claims["aud"] as? String == alias)
            }
            let refreshed = try await client.descope("/v1/auth/refresh", bearer: "\(alias):\(refreshJwt)")
            #expect(refreshed.status == .ok)
            let next = try #require(try refreshed.json()["refreshJwt"] as? String)
            // The Verity project id still names the project (its tokens name the Descope project id).
            let byVerityId = try await client.descope("/v1/auth/me", method: .get, bearer: "\(pid):\(next)")
            #expect(byVerityId.status == .ok)
            let keys = try await client.descope("/v1/keys/\(pid)", method: .get, bearer: alias)
            #expect(keys.status == .ok)
            let roles = try await client.descope(
                "/v1/mgmt/role/all", method: .get, bearer: "\(alias):\(node.apiKey)")
            #expect(roles.status == .ok)

            // Another project's key, an unknown id, another project's id on the keys route: refused.
            let other = try await node.verity.admin.createProject(name: "Other")
            let foreignKey = try await client.descope(
                "/v1/mgmt/role/all", method: .get, bearer: "\(alias):\(other.key.secret)")
            #expect(try foreignKey.descopeError() == "E011002")
            let unknown = try await client.descope(
                "/v1/auth/otp/signup-in/email", bearer: "P2Unknown", json: #"{"loginId":"\#(Self.email)"}"#)
            #expect(try unknown.descopeError() == "E011002")
            let crossed = try await client.descope("/v2/keys/\(other.project.id)", method: .get, bearer: alias)
            #expect(try crossed.descopeError() == "E011002")
        }
    }

    @Test("A Descope project id is one project's, well formed, and can be removed", arguments: TestEngine.available)
    func descopeProjectIdRules(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let admin = node.verity.admin
        _ = try await admin.updateProject(id: node.project.id, name: nil) { $0.descopeProjectId = "P2Taken" }
        let other = try await admin.createProject(name: "Other")
        await #expect(throws: ConfigurationError.self) {
            try await admin.updateProject(id: other.project.id, name: nil) { $0.descopeProjectId = "P2Taken" }
        }
        await #expect(throws: ConfigurationError.self) {
            try await admin.createProject(name: "Third", settings: ProjectSettings(descopeProjectId: "P2Taken"))
        }
        for bad in [
            "", "prj_\(node.project.id.dropFirst(4))", "P2 space", "P2/slash", String(repeating: "P", count: 65),
        ] {
            await #expect(throws: ConfigurationError.self, "\(bad)") {
                try await admin.updateProject(id: other.project.id, name: nil) { $0.descopeProjectId = bad }
            }
        }
        #expect(try await admin.project(id: other.project.id).settings.descopeProjectId == nil)
        let removed = try await admin.updateProject(id: node.project.id, name: nil) { $0.descopeProjectId = nil }
        #expect(removed.settings.descopeProjectId == nil)
        let moved = try await admin.updateProject(id: other.project.id, name: nil) { $0.descopeProjectId = "P2Taken" }
        #expect(moved.settings.descopeProjectId == "P2Taken")
        #expect(try await admin.findProject(descopeProjectId: "P2Taken")?.id == other.project.id)
    }
}

extension DescopeFaceTests {
    /// One rule in `AdminService`'s lookups: a project id is `prj_…` of at most 64 characters, a Descope project id
    /// what the settings allow; anything else is answered as no project, on each face that names projects.
    @Test(
        "A project id of no project's shape is no project: the native header, the well-known keys, the Descope bearer")
    func projectIdShapes() async throws {
        let node = try await TestNode.make(.sqlite)
        let long = node.project.id + String(repeating: "a", count: 64)
        try await node.run { client in
            // Of no project id's shape: 401, as with no header; of its shape but unknown: 404.
            for (id, status) in [
                (long, HTTPResponse.Status.unauthorized), ("PRJ_" + node.project.id.dropFirst(4), .unauthorized),
                ("prj_" + "ü", .notFound),
            ] {
                let native = try await client.send(
                    .post, "/v1/auth/otp/start", key: nil, json: #"{"loginId":"\#(Self.email)","channel":"email"}"#,
                    headers: [HTTPField.Name(AuthHeaders.project)!: id])
                #expect(native.status == status, "\(id)")
                let keys = try await client.send(.get, "/v1/projects/\(id)/jwks.json", key: nil)
                #expect(keys.status == .notFound, "\(id)")
                let descope = try await client.descope(
                    "/v1/auth/otp/signup-in/email", bearer: id, json: #"{"loginId":"\#(Self.email)"}"#)
                #expect(try descope.descopeError() == "E011002", "\(id)")
            }
            let named = try await client.send(.get, "/v1/projects/\(node.project.id)/jwks.json", key: nil)
            #expect(named.status == .ok)
        }
        #expect(try await node.verity.admin.findProject(id: long) == nil)
        #expect(try await node.verity.admin.findProject(descopeProjectId: String(repeating: "P", count: 65)) == nil)
    }
}
