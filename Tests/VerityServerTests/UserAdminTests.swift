import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VerityCore

@testable import VerityServer

@Suite("Users admin API")
struct UserAdminTests {
    @Test("Create, get, update, disable, enable and delete a user", arguments: TestEngine.available)
    func lifecycle(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let created = try await client.send(
                .post, "/v1/users", key: node.apiKey,
                json: #"{"loginIds":[" Jane.Doe@Example.COM ","+1 (415) 555-0100"],"displayName":" Jane ","#
                    + #""customClaims":{"plan":"pro","seats":3,"beta":true,"tags":["a"],"org":{"id":7}}}"#)
            #expect(created.status == .created)
            let user = try created.decode(User.self)
            #expect(user.id.hasPrefix("usr_"))
            #expect(user.loginIds == ["Jane.Doe@example.com", "+14155550100"])
            #expect(user.displayName == "Jane")
            #expect(
                user.customClaims == [
                    "plan": .string("pro"), "seats": .integer(3), "beta": .bool(true), "tags": .array([.string("a")]),
                    "org": .object(["id": .integer(7)]),
                ])
            #expect(user.disabled == false)
            #expect(user.createdAt == node.clock.now())
            #expect(user.lastSignInAt == nil)

            let fetched = try await client.send(.get, "/v1/users/\(user.id)", key: node.apiKey)
            #expect(fetched.status == .ok)
            #expect(try fetched.decode(User.self) == user)

            let renamed = try await client.send(
                .patch, "/v1/users/\(user.id)", key: node.apiKey, json: #"{"displayName":"Jane Doe"}"#)
            #expect(renamed.status == .ok)
            let afterRename = try renamed.decode(User.self)
            #expect(afterRename.displayName == "Jane Doe")
            #expect(afterRename.loginIds == user.loginIds)
            #expect(afterRename.customClaims == user.customClaims)

            let changed = try await client.send(
                .patch, "/v1/users/\(user.id)", key: node.apiKey,
                json: #"{"customClaims":{},"loginIds":["+44 20 7946 0958"],"displayName":""}"#)
            #expect(changed.status == .ok)
            let afterChange = try changed.decode(User.self)
            #expect(afterChange.loginIds == ["+442079460958"])
            #expect(afterChange.customClaims.isEmpty)
            #expect(afterChange.displayName == nil)

            // The old email address is free again; the new number is taken.
            let reuse = try await client.send(
                .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["jane.doe@example.com"]}"#)
            #expect(reuse.status == .created)

            let disabled = try await client.send(.post, "/v1/users/\(user.id)/disable", key: node.apiKey)
            #expect(disabled.status == .ok)
            #expect(try disabled.decode(User.self).disabled)
            #expect(try await client.send(.get, "/v1/users/\(user.id)", key: node.apiKey).decode(User.self).disabled)
            let enabled = try await client.send(.post, "/v1/users/\(user.id)/enable", key: node.apiKey)
            #expect(try enabled.decode(User.self).disabled == false)

            let deleted = try await client.send(.delete, "/v1/users/\(user.id)", key: node.apiKey)
            #expect(deleted.status == .noContent)
            let gone = try await client.send(.get, "/v1/users/\(user.id)", key: node.apiKey)
            #expect(gone.status == .notFound)
            #expect(try gone.problem().code == "user_not_found")
            let again = try await client.send(.delete, "/v1/users/\(user.id)", key: node.apiKey)
            #expect(try again.problem().code == "user_not_found")

            // Its login id went with it.
            let recreated = try await client.send(
                .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["+442079460958"]}"#)
            #expect(recreated.status == .created)
        }
    }

    @Test("A login id belongs to one user; emails compare regardless of case", arguments: TestEngine.available)
    func duplicates(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let first = try await client.send(
                .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["jane.doe@example.com"]}"#)
            #expect(first.status == .created)
            let firstUser = try first.decode(User.self)

            for body in [
                #"{"loginIds":[" Jane.Doe@Example.COM "]}"#, #"{"loginIds":["JANE.DOE@EXAMPLE.COM","+14155550100"]}"#,
            ] {
                let taken = try await client.send(.post, "/v1/users", key: node.apiKey, json: body)
                #expect(taken.status == .conflict)
                #expect(try taken.problem().code == "login_id_taken")
            }
            // Nothing of the refused user was written: its phone number is still free.
            let phone = try await client.send(
                .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["+14155550100"]}"#)
            #expect(phone.status == .created)
            let phoneUser = try phone.decode(User.self)

            let page = try await client.send(.get, "/v1/users", key: node.apiKey).decode(Page<User>.self)
            #expect(page.items.map(\.id).sorted() == [firstUser.id, phoneUser.id].sorted())

            // Taking another user's login id by update is refused and changes nothing.
            let steal = try await client.send(
                .patch, "/v1/users/\(phoneUser.id)", key: node.apiKey,
                json: #"{"loginIds":["+14155550100","Jane.Doe@example.com"],"displayName":"Thief"}"#)
            #expect(steal.status == .conflict)
            #expect(try steal.problem().code == "login_id_taken")
            let unchanged = try await client.send(.get, "/v1/users/\(phoneUser.id)", key: node.apiKey)
            #expect(try unchanged.decode(User.self) == phoneUser)

            // A user may keep its own login ids when updating them.
            let same = try await client.send(
                .patch, "/v1/users/\(firstUser.id)", key: node.apiKey, json: #"{"loginIds":["JANE.doe@example.com"]}"#)
            #expect(same.status == .ok)
            #expect(try same.decode(User.self).loginIds == ["JANE.doe@example.com"])
        }
    }

    @Test("Concurrent creates with one login id: exactly one wins, the rest get 409", arguments: TestEngine.available)
    func concurrentCreates(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run(.live) { client in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        // Half of them spell the address differently: still the same login.
                        let email = index.isMultiple(of: 2) ? "race@example.com" : "RACE@Example.com"
                        return try await client.send(
                            .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["\#(email)"]}"#
                        ).status.code
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 19)
            let page = try await client.send(.get, "/v1/users", key: node.apiKey).decode(Page<User>.self)
            #expect(page.items.count == 1)
        }
    }

    @Test(
        "Bad input is a 4xx with a code and writes nothing",
        arguments: [
            (#"{"loginIds":[]}"#, "invalid_login_id"),
            (#"{"loginIds":["a@example.com","b@example.com"]}"#, "invalid_login_id"),
            (#"{"loginIds":["+14155550100","+14155550101"]}"#, "invalid_login_id"),
            (#"{"loginIds":["a@b@example.com"]}"#, "invalid_email"),
            (#"{"loginIds":["4155550100"]}"#, "invalid_phone_number"),
            (#"{"loginIds":["+1415"]}"#, "invalid_phone_number"),
            (#"{"loginIds":"a@example.com"}"#, "invalid_request"),
            (#"{"displayName":"x"}"#, "invalid_request"),
            (#"{"loginIds":["a@example.com"],"customClaims":{"sub":"x"}}"#, "invalid_claims"),
            (#"{"loginIds":["a@example.com"],"customClaims":{"roles":["admin"]}}"#, "invalid_claims"),
            (#"{"loginIds":["a@example.com"],"customClaims":{"":1}}"#, "invalid_claims"),
            (#"{"loginIds":["a@example.com"],"customClaims":[1]}"#, "invalid_request"),
            (#"{"loginIds":["a@example.com"],"customClaims":"x"}"#, "invalid_request"),
            (#"{"loginIds":["a@example.com"],"displayName":"a\u0000b"}"#, "invalid_request"),
            (#"{"loginIds":["#, "malformed_json"),
        ])
    func badInput(body: String, code: String) async throws {
        let node = try await TestNode.make(.sqlite)
        try await node.run { client in
            let response = try await client.send(.post, "/v1/users", key: node.apiKey, json: body)
            #expect(response.status.code == 400)
            #expect(try response.problem().code == code)
            let page = try await client.send(.get, "/v1/users", key: node.apiKey).decode(Page<User>.self)
            #expect(page.items.isEmpty)
        }
    }

    @Test("Custom claims are limited to 4 KiB", arguments: TestEngine.available)
    func claimsSize(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            // {"k":"…"} is 8 bytes besides the value.
            let fits = String(repeating: "x", count: 4096 - 8)
            let ok = try await client.send(
                .post, "/v1/users", key: node.apiKey,
                json: #"{"loginIds":["a@example.com"],"customClaims":{"k":"\#(fits)"}}"#)
            #expect(ok.status == .created)
            let user = try ok.decode(User.self)
            let tooBig = try await client.send(
                .patch, "/v1/users/\(user.id)", key: node.apiKey, json: #"{"customClaims":{"k":"\#(fits)x"}}"#)
            #expect(tooBig.status == .badRequest)
            #expect(try tooBig.problem().code == "invalid_claims")
            let reserved = try await client.send(
                .patch, "/v1/users/\(user.id)", key: node.apiKey, json: #"{"customClaims":{"exp":1}}"#)
            #expect(try reserved.problem().code == "invalid_claims")
            let stored = try await client.send(.get, "/v1/users/\(user.id)", key: node.apiKey).decode(User.self)
            #expect(stored.customClaims == ["k": .string(fits)])
        }
    }

    @Test("Search by login id, normalised, and paging newest first", arguments: TestEngine.available)
    func listAndSearch(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            var created: [User] = []
            for index in 0..<7 {
                let response = try await client.send(
                    .post, "/v1/users", key: node.apiKey,
                    json: #"{"loginIds":["user\#(index)@Example.com","+1415555010\#(index)"]}"#)
                #expect(response.status == .created)
                created.append(try response.decode(User.self))
                // Two users share each second, so the id breaks ties.
                if index % 2 == 1 { node.clock.advance(by: 1) }
            }
            let expected = created.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.map(\.id)

            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "/v1/users?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await client.send(.get, query, key: node.apiKey)
                #expect(response.status == .ok)
                let page = try response.decode(Page<User>.self)
                #expect(page.items.count <= 3)
                seen += page.items.map(\.id)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 10
            #expect(seen == expected)
            #expect(pages == 3)
            // An empty cursor is the first page, as a missing one is.
            let first = try await client.send(.get, "/v1/users?limit=3&cursor=", key: node.apiKey)
            #expect(try first.decode(Page<User>.self).items.map(\.id) == Array(expected.prefix(3)))

            for loginId in ["USER3@example.com", "user3@EXAMPLE.COM", "%2B14155550103", "+14155550103"] {
                let found = try await client.send(.get, "/v1/users?loginId=\(loginId)", key: node.apiKey)
                #expect(found.status == .ok, "\(loginId)")
                #expect(try found.decode(Page<User>.self).items.map(\.id) == [created[3].id], "\(loginId)")
            }
            let none = try await client.send(.get, "/v1/users?loginId=nobody@example.com", key: node.apiKey)
            #expect(try none.decode(Page<User>.self).items.isEmpty)

            for (query, code) in [
                ("limit=0", "invalid_request"), ("limit=101", "invalid_request"), ("limit=x", "invalid_request"),
                ("cursor=nonsense", "invalid_request"), ("loginId=not-a-number", "invalid_phone_number"),
                ("loginId=a@", "invalid_email"),
            ] {
                let response = try await client.send(.get, "/v1/users?\(query)", key: node.apiKey)
                #expect(response.status == .badRequest, "\(query)")
                #expect(try response.problem().code == code, "\(query)")
            }
        }
    }

    @Test("Another project's key sees nothing", arguments: TestEngine.available)
    func tenancy(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let other = try await node.otherProject()
        try await node.run { client in
            let user = try await client.send(
                .post, "/v1/users", key: node.apiKey, json: #"{"loginIds":["jane@example.com"]}"#
            ).decode(User.self)
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/users/\(user.id)"), (.post, "/v1/users/\(user.id)/disable"),
                (.post, "/v1/users/\(user.id)/enable"), (.delete, "/v1/users/\(user.id)"),
            ] {
                let response = try await client.send(method, path, key: other.apiKey)
                #expect(response.status == .notFound, "\(method) \(path)")
                #expect(try response.problem().code == "user_not_found")
            }
            let patch = try await client.send(
                .patch, "/v1/users/\(user.id)", key: other.apiKey, json: #"{"displayName":"Mallory"}"#)
            #expect(patch.status == .notFound)
            let list = try await client.send(.get, "/v1/users", key: other.apiKey).decode(Page<User>.self)
            #expect(list.items.isEmpty)
            let search = try await client.send(.get, "/v1/users?loginId=jane@example.com", key: other.apiKey)
            #expect(try search.decode(Page<User>.self).items.isEmpty)
            // Login ids are unique per project, not across projects.
            let same = try await client.send(
                .post, "/v1/users", key: other.apiKey, json: #"{"loginIds":["jane@example.com"]}"#)
            #expect(same.status == .created)

            let mine = try await client.send(.get, "/v1/users/\(user.id)", key: node.apiKey).decode(User.self)
            #expect(mine == user)
            let noKey = try await client.send(.get, "/v1/users", key: nil)
            #expect(noKey.status == .unauthorized)
        }
    }

    @Test("User ids are usr_ ids; push factors of other user ids still answer", arguments: TestEngine.available)
    func routesCoexist(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        try await node.run { client in
            let unknown = try await client.send(.get, "/v1/users/jane", key: node.apiKey)
            #expect(unknown.status == .notFound)
            #expect(try unknown.problem().code == "user_not_found")
            let factors = try await client.send(.get, "/v1/users/jane/factors", key: node.apiKey)
            #expect(factors.status == .ok)
            #expect(try factors.decode(Page<Factor>.self).items.isEmpty)
        }
    }

    @Test("The service the CLI uses applies the same rules", arguments: TestEngine.available)
    func service(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        let users = node.verity.users
        let user = try await users.create(
            CreateUserRequest(loginIds: ["+14155550100"], displayName: "Jane"), in: node.project)
        #expect(try await users.list(loginId: "+1 415 555 0100", in: node.project).items == [user])
        await #expect(throws: VerityError.self) {
            try await users.create(CreateUserRequest(loginIds: ["+14155550100"]), in: node.project)
        }
        #expect(try await node.verity.accounts.setDisabled(true, id: user.id, in: node.project).disabled)
        try await users.delete(id: user.id, in: node.project)
        #expect(try await users.list(in: node.project).items.isEmpty)
        try await node.verity.database.close()
    }
}
