import Foundation
import Logging
import VerityCore

/// The rules of a project's roles: names, permissions, and who holds them. A change shows in the user's next
/// session token (at the latest after the next refresh).
public struct RoleService: Sendable, UsesRuntime {
    /// The most permissions one role may grant.
    public static let maxPermissions = 100

    private let store: RoleStore
    /// Whose roles they are: a user is read in the unit of work that changes its roles.
    let users: UserService
    let runtime: Runtime

    init(store: RoleStore, users: UserService, runtime: Runtime) {
        self.store = store
        self.users = users
        self.runtime = runtime
    }

    /// Every permission the user's roles grant, for their session token.
    func permissions(userId: String, in project: Project) async throws -> [String] {
        try await store.permissions(userId: userId, projectId: project.id)
    }

    public func create(_ request: CreateRoleRequest, in project: Project) async throws -> Role {
        let role = Role(
            name: try Self.validName(request.name, what: "role name"),
            description: try UserService.validDisplayName(request.description),
            permissions: try Self.validPermissions(request.permissions ?? []), createdAt: clock.now())
        do {
            try await store.insert(role, projectId: project.id)
        } catch RoleStore.WriteError.roleExists {
            throw VerityError(.roleExists, "This project already has a role named \(role.name).")
        }
        logger.info("Role created", metadata: ["role": "\(role.name)", "project": "\(project.id)"])
        return role
    }

    public func list(in project: Project) async throws -> [Role] {
        try await store.roles(projectId: project.id)
    }

    public func update(name: String, _ request: UpdateRoleRequest, in project: Project) async throws -> Role {
        let description: String?? = try request.description.map { try UserService.validDisplayName($0) }
        guard
            let role = try await store.update(
                name: name, projectId: project.id, description: description,
                permissions: try request.permissions.map(Self.validPermissions))
        else { throw Self.notFound(name) }
        logger.info("Role updated", metadata: ["role": "\(name)", "project": "\(project.id)"])
        return role
    }

    public func delete(name: String, in project: Project) async throws {
        guard try await store.delete(name: name, projectId: project.id) else { throw Self.notFound(name) }
        logger.info("Role deleted", metadata: ["role": "\(name)", "project": "\(project.id)"])
    }

    /// Gives roles to a user (all or nothing).
    public func assign(_ names: [String], toUser userId: String, in project: Project) async throws -> User {
        try await store.unitOfWork { work in try await assign(names, toUser: userId, in: project, in: work) }
    }

    /// Gives roles to a user as part of `work`.
    func assign(_ names: [String], toUser userId: String, in project: Project, in work: UnitOfWork) async throws
        -> User
    {
        guard (1...Self.maxPermissions).contains(names.count) else {
            throw VerityError(.invalidRole, "Name 1 to \(Self.maxPermissions) roles.")
        }
        guard try await users.findUser(id: userId, in: project, in: work) != nil else {
            throw Self.userNotFound(userId)
        }
        do {
            try await store.grant(names, userId: userId, projectId: project.id, in: work)
        } catch RoleStore.WriteError.roleNotFound {
            throw VerityError(.roleNotFound, "A named role does not exist in this project; create it first.")
        }
        return try await held(by: userId, in: project, in: work)
    }

    /// Takes a role from a user.
    public func remove(_ name: String, fromUser userId: String, in project: Project) async throws -> User {
        try await store.unitOfWork { work in try await remove(name, fromUser: userId, in: project, in: work) }
    }

    /// Takes a role from a user as part of `work`.
    func remove(_ name: String, fromUser userId: String, in project: Project, in work: UnitOfWork) async throws
        -> User
    {
        try await store.take(name, userId: userId, projectId: project.id, in: work)
        return try await held(by: userId, in: project, in: work)
    }

    /// Makes `names` exactly the roles of `user`, as part of `work`: the missing ones given, the others taken.
    func replace(rolesOf user: User, with names: [String], in project: Project, in work: UnitOfWork) async throws
        -> User
    {
        var user = user
        let added = names.filter { !user.roles.contains($0) }
        if !added.isEmpty { user = try await assign(added, toUser: user.id, in: project, in: work) }
        for name in user.roles where !names.contains(name) {
            user = try await remove(name, fromUser: user.id, in: project, in: work)
        }
        return user
    }

    /// The user `userId` with the roles it holds now, in `work`.
    private func held(by userId: String, in project: Project, in work: UnitOfWork) async throws -> User {
        guard let user = try await users.findUser(id: userId, in: project, in: work) else {
            throw Self.userNotFound(userId)
        }
        return user
    }

    /// Role and permission names: 1 to 100 letters, digits and `_ . : -`, starting with a letter or digit.
    static func validName(_ name: String, what: String) throws -> String {
        guard (1...100).contains(name.count), let first = name.unicodeScalars.first,
            first.properties.isAlphabetic || ("0"..."9").contains(first),
            name.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.:-".unicodeScalars.contains($0))
            })
        else {
            throw VerityError(
                .invalidRole,
                "A \(what) has 1 to 100 ASCII letters, digits and `_ . : -`, starting with a letter or digit.")
        }
        return name
    }

    static func validPermissions(_ permissions: [String]) throws -> [String] {
        guard permissions.count <= maxPermissions else {
            throw VerityError(.invalidRole, "A role grants at most \(maxPermissions) permissions.")
        }
        var seen = Set<String>()
        return try permissions.map { try validName($0, what: "permission") }.filter { seen.insert($0).inserted }
    }

    private static func userNotFound(_ id: String) -> VerityError {
        VerityError(.userNotFound, "No user \(id) in this project.")
    }

    private static func notFound(_ name: String) -> VerityError {
        VerityError(.roleNotFound, "No role \(name) in this project.")
    }
}
