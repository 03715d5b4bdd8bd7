import Foundation
import Hummingbird
import VerityCore

/// The part of Descope's management API that a backend's admin code calls through python-sdk's `mgmt.user` and
/// `mgmt.role`: users created, loaded, searched, updated, deleted and given roles; roles created, listed, deleted.
/// `Authorization: Bearer <projectId>:<managementKey>`, the key being a Verity API key of that project.
///
/// Users are Verity's: Descope's `loginId`, `additionalLoginIds`, `email` and `phone` become its login ids (email
/// addresses or phone numbers), `displayName` its name, `customAttributes` its custom claims (which its tokens
/// carry). Tenants are not mapped: a request naming one is refused.
struct DescopeManagement {
    let users: UserService
    let roles: RoleService
    /// Users changed with their roles and status, all or nothing.
    let accounts: UserAccounts
    let projects: DescopeProjects

    /// The most users one search answers.
    static let maxSearchLimit = 100

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("v1/mgmt/user/create", use: createUser)
        group.get("v1/mgmt/user", use: loadUser)
        group.post("v1/mgmt/user/search", use: searchUsers)
        group.post("v2/mgmt/user/search", use: searchUsers)
        group.post("v1/mgmt/user/update", use: updateUser)
        group.post("v1/mgmt/user/update/status", use: updateStatus)
        group.post("v1/mgmt/user/delete", use: deleteUser)
        group.post("v1/mgmt/user/update/role/add", use: addRoles)
        group.post("v2/mgmt/user/update/role/add", use: addRoles)
        group.post("v1/mgmt/user/update/role/remove", use: removeRoles)
        group.post("v1/mgmt/role/create", use: createRole)
        group.get("v1/mgmt/role/all", use: allRoles)
        group.post("v1/mgmt/role/delete", use: deleteRole)
    }

    // MARK: - Users

    @Sendable func createUser(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(UserBody.self, context: context)
        let (logins, roleNames) = try await validated(body, in: project)
        let user = try await accounts.save(
            UserAccounts.Change(
                .create(
                    CreateUserRequest(
                        loginIds: logins, displayName: body.displayName ?? body.name,
                        customClaims: body.customAttributes)),
                roles: roleNames, disabled: body.status == "disabled" ? true : nil),
            in: project)
        return ExactKeysJSON(["user": DescopeUser.json(user)])
    }

    /// `GET /v1/mgmt/user?loginId=…` or `?userId=…`.
    @Sendable func loadUser(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let query = request.uri.queryParameters
        let user: User
        if let userId = query["userId"].map(String.init) {
            user = try await users.user(id: userId, in: project)
        } else if let loginId = query["loginId"].map(String.init) {
            user = try await self.user(loginId: loginId, in: project)
        } else {
            throw DescopeError.badRequest("Name the user with `loginId` or `userId`.")
        }
        return ExactKeysJSON(["user": DescopeUser.json(user)])
    }

    /// `POST /v2/mgmt/user/search`: by login ids, emails, phones or user ids, or a page of all users; filtered by
    /// role names and statuses.
    @Sendable func searchUsers(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(SearchBody.self, context: context, empty: SearchBody())
        let limit = body.limit ?? Self.maxSearchLimit
        let page = body.page ?? 0
        guard (0...Self.maxSearchLimit).contains(limit), (0...1000).contains(page) else {
            throw DescopeError.badRequest("`limit` is 0 to \(Self.maxSearchLimit) and `page` 0 to 1000.")
        }
        guard (body.tenantIds ?? []).isEmpty else { throw Self.noTenants }
        var found: [User] = []
        let named = (body.loginIds ?? []) + (body.emails ?? []) + (body.phones ?? [])
        if !named.isEmpty || !(body.userIds ?? []).isEmpty {
            for loginId in named.prefix(Self.maxSearchLimit) {
                if let user = try await users.list(loginId: loginId, in: project).items.first { found.append(user) }
            }
            for id in (body.userIds ?? []).prefix(Self.maxSearchLimit) where id.hasPrefix("usr_") {
                if let user = try await users.findUser(id: id, in: project) { found.append(user) }
            }
        } else {
            var cursor: String?
            var skipped = 0
            repeat {
                let listed = try await users.list(limit: UserService.maxPageSize, cursor: cursor, in: project)
                found += listed.items
                cursor = listed.nextCursor
                if found.count > page * max(limit, 1) + limit || cursor == nil { break }
                skipped += 1
            } while skipped < 10_000
        }
        let roleNames = Set(body.roleNames ?? [])
        let statuses = Set(body.statuses ?? [])
        let matching = found.filter { user in
            (roleNames.isEmpty || !roleNames.isDisjoint(with: user.roles))
                && (statuses.isEmpty || statuses.contains(user.disabled ? "disabled" : "enabled"))
        }
        let pageItems = matching.dropFirst(page * limit).prefix(limit == 0 ? Self.maxSearchLimit : limit)
        return ExactKeysJSON([
            "users": .array(pageItems.map(DescopeUser.json)), "total": .integer(Int64(matching.count)),
        ])
    }

    /// `POST /v1/mgmt/user/update`: every field is replaced, as on Descope (roles too).
    @Sendable func updateUser(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(UserBody.self, context: context)
        let (logins, roleNames) = try await validated(body, in: project)
        let existing = try await user(loginId: body.loginId ?? "", in: project)
        let user = try await accounts.save(
            UserAccounts.Change(
                .update(
                    id: existing.id,
                    UpdateUserRequest(
                        displayName: body.displayName ?? body.name ?? "", customClaims: body.customAttributes ?? [:],
                        loginIds: logins)),
                roles: roleNames),
            in: project)
        return ExactKeysJSON(["user": DescopeUser.json(user)])
    }

    /// `POST /v1/mgmt/user/update/status`: `enabled` or `disabled`.
    @Sendable func updateStatus(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(StatusBody.self, context: context)
        guard let status = body.status, ["enabled", "disabled"].contains(status) else {
            throw DescopeError.badRequest("`status` is enabled or disabled.")
        }
        let user = try await user(loginId: body.loginId ?? "", in: project)
        let updated = try await accounts.setDisabled(status == "disabled", id: user.id, in: project)
        return ExactKeysJSON(["user": DescopeUser.json(updated)])
    }

    /// `POST /v1/mgmt/user/delete` `{loginId}` or `{userId}`; deleting a user that is not there is no error.
    @Sendable func deleteUser(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(UserRef.self, context: context)
        let id: String?
        switch (body.loginId, body.userId) {
        case (let loginId?, nil): id = try await users.list(loginId: loginId, in: project).items.first?.id
        case (nil, let userId?): id = userId.hasPrefix("usr_") ? userId : nil
        default: throw DescopeError.badRequest("Name the user with exactly one of `loginId` or `userId`.")
        }
        if let id, try await users.findUser(id: id, in: project) != nil {
            try await users.delete(id: id, in: project)
        }
        return ExactKeysJSON([:])
    }

    @Sendable func addRoles(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(UserRoles.self, context: context)
        guard body.tenantId?.isEmpty ?? true else { throw Self.noTenants }
        let user = try await user(loginId: body.loginId ?? "", in: project)
        let updated = try await roles.assign(body.roleNames ?? [], toUser: user.id, in: project)
        return ExactKeysJSON(["user": DescopeUser.json(updated)])
    }

    @Sendable func removeRoles(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(UserRoles.self, context: context)
        guard body.tenantId?.isEmpty ?? true else { throw Self.noTenants }
        var user = try await user(loginId: body.loginId ?? "", in: project)
        for name in body.roleNames ?? [] where user.roles.contains(name) {
            user = try await roles.remove(name, fromUser: user.id, in: project)
        }
        return ExactKeysJSON(["user": DescopeUser.json(user)])
    }

    // MARK: - Roles

    @Sendable func createRole(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(RoleBody.self, context: context)
        guard body.tenantId?.isEmpty ?? true else { throw Self.noTenants }
        _ = try await roles.create(
            CreateRoleRequest(
                name: body.name ?? "", description: body.description, permissions: body.permissionNames ?? []),
            in: project)
        return ExactKeysJSON([:])
    }

    /// `GET /v1/mgmt/role/all`: `{"roles": [{name, description, permissionNames, createdTime}]}`.
    @Sendable func allRoles(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let listed = try await roles.list(in: project).map { role in
            JSONValue.object([
                "name": .string(role.name), "description": .string(role.description ?? ""),
                "permissionNames": .array(role.permissions.map(JSONValue.string)),
                "createdTime": .integer(Int64(role.createdAt.timeIntervalSince1970)), "tenantId": .string(""),
            ])
        }
        return ExactKeysJSON(["roles": .array(listed)])
    }

    @Sendable func deleteRole(_ request: Request, context: VerityRequestContext) async throws -> ExactKeysJSON {
        let project = try await projects.managedProject(request)
        let body = try await request.decodeDescope(RoleBody.self, context: context)
        guard body.tenantId?.isEmpty ?? true else { throw Self.noTenants }
        try await roles.delete(name: body.name ?? "", in: project)
        return ExactKeysJSON([:])
    }

    // MARK: - Helpers

    private static let noTenants = DescopeError.badRequest("Tenants are not supported: use project-level roles.")

    /// The user holding a login id; `E062108` when there is none.
    private func user(loginId: String, in project: Project) async throws -> User {
        guard !loginId.isEmpty else { throw DescopeError.badRequest("`loginId` is required.") }
        guard let user = try await users.list(loginId: loginId, in: project).items.first else {
            throw DescopeError.userNotFound
        }
        return user
    }

    /// The login ids and role names of a create or update, checked before anything is written: the login id, the
    /// additional ones, the email and the phone (each once), and roles that exist.
    private func validated(_ body: UserBody, in project: Project) async throws -> ([String], [String]) {
        guard let loginId = body.loginId, !loginId.isEmpty else {
            throw DescopeError.badRequest("`loginId` is required.")
        }
        guard (body.userTenants ?? []).isEmpty else { throw Self.noTenants }
        var logins: [String] = []
        var keys: Set<String> = []
        for candidate in [loginId] + (body.additionalLoginIds ?? []) + [body.email, body.phone].compactMap({ $0 })
        where !candidate.isEmpty {
            if keys.insert(try UserLogins.key(for: candidate)).inserted { logins.append(candidate) }
        }
        let roleNames = body.roleNames ?? []
        let existing = Set(try await roles.list(in: project).map(\.name))
        if let unknown = roleNames.first(where: { !existing.contains($0) }) {
            throw DescopeError.badRequest("There is no role \(unknown); create it first.")
        }
        return (logins, roleNames)
    }
}

private struct UserBody: Decodable {
    var loginId: String?
    var email: String?
    var phone: String?
    var name: String?
    var displayName: String?
    var roleNames: [String]?
    var userTenants: [JSONValue]?
    var customAttributes: [String: JSONValue]?
    var additionalLoginIds: [String]?
    var status: String?
}

private struct UserRef: Decodable {
    var loginId: String?
    var userId: String?
}

private struct StatusBody: Decodable {
    var loginId: String?
    var status: String?
}

private struct UserRoles: Decodable {
    var loginId: String?
    var roleNames: [String]?
    var tenantId: String?
}

private struct RoleBody: Decodable {
    var name: String?
    var description: String?
    var permissionNames: [String]?
    var tenantId: String?
}

private struct SearchBody: Decodable {
    var limit: Int?
    var page: Int?
    var loginIds: [String]?
    var emails: [String]?
    var phones: [String]?
    var userIds: [String]?
    var roleNames: [String]?
    var statuses: [String]?
    var tenantIds: [String]?
}
