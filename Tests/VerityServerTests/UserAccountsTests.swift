import Foundation
import Testing
import VerityCore

@testable import VerityServer

/// Creating or updating a user with its roles and status is one operation in one unit of work: the Descope and
/// Firebase management faces call it, and a failure at any step leaves nothing of the change behind.
@Suite("A user's change with its roles and status, all or nothing")
struct UserAccountsTests {
    @Test("A role that fails after the user is written leaves no user behind", arguments: TestEngine.available)
    func createRollsBack(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        _ = try await node.verity.roles.create(CreateRoleRequest(name: "admin"), in: node.project)
        // The failure is injected at the second step: the user is inserted, then a role that does not exist fails.
        await #expect(throws: VerityError.self) {
            try await node.verity.accounts.save(
                UserAccounts.Change(
                    .create(CreateUserRequest(loginIds: ["jane@example.com"])), roles: ["admin", "ghost"],
                    disabled: true),
                in: node.project)
        }
        #expect(try await node.verity.users.list(loginId: "jane@example.com", in: node.project).items.isEmpty)
        // The login id is free again: the next create takes it.
        let jane = try await node.verity.accounts.save(
            UserAccounts.Change(
                .create(CreateUserRequest(loginIds: ["jane@example.com"])), roles: ["admin"], disabled: true),
            in: node.project)
        #expect(jane.roles == ["admin"])
        #expect(jane.disabled)
    }

    @Test("An update whose role grant fails half-way keeps the user as it was", arguments: TestEngine.available)
    func updateRollsBack(engine: TestEngine) async throws {
        let node = try await TestNode.make(engine)
        for name in ["admin", "viewer"] {
            _ = try await node.verity.roles.create(CreateRoleRequest(name: name), in: node.project)
        }
        let before = try await node.verity.accounts.save(
            UserAccounts.Change(
                .create(CreateUserRequest(loginIds: ["+14155550100"], displayName: "Jane")), roles: ["viewer"]),
            in: node.project)
        // The name changes, `admin` is granted, then `ghost` fails: none of it may stay.
        await #expect(throws: VerityError.self) {
            try await node.verity.accounts.save(
                UserAccounts.Change(
                    .update(id: before.id, UpdateUserRequest(displayName: "Joan")), roles: ["admin", "ghost"],
                    disabled: true),
                in: node.project)
        }
        #expect(try await node.verity.users.user(id: before.id, in: node.project) == before)
    }
}
