import Foundation
import Logging
import VerityCore

/// A user with what hangs on it: its roles, its status and its sessions. A change that touches several of these at
/// once (a management call that creates a user with roles, disabled; disabling, which ends the user's sessions) is
/// one operation here and one unit of work, so a failure at any step leaves nothing of it behind.
public struct UserAccounts: Sendable {
    let users: UserService
    let roles: RoleService
    let sessions: SessionService
    let logger: Logger

    /// What a backend's management call wants a user to be.
    public struct Change: Sendable {
        /// A new user, or the fields of an existing one to change (an absent field stays as it is).
        public enum Subject: Sendable {
            case create(CreateUserRequest)
            case update(id: String, UpdateUserRequest)
        }

        public var subject: Subject
        /// Exactly the roles the user is to hold; nil leaves them as they are.
        public var roles: [String]?
        /// Whether the user is to be disabled; nil leaves it as it is.
        public var disabled: Bool?
        /// Whether every session of the user ends (firebase-admin's `revoke_refresh_tokens`).
        public var endSessions: Bool

        public init(_ subject: Subject, roles: [String]? = nil, disabled: Bool? = nil, endSessions: Bool = false) {
            self.subject = subject
            self.roles = roles
            self.disabled = disabled
            self.endSessions = endSessions
        }
    }

    /// Creates or updates a user with its roles and status, all or nothing: a role that does not exist, a login id
    /// that is taken or any failure on the way leaves the project as it was.
    public func save(_ change: Change, in project: Project) async throws -> User {
        try await users.unitOfWork { work in
            var user =
                switch change.subject {
                case .create(let request): try await users.create(request, in: project, in: work)
                case .update(let id, let request): try await users.update(id: id, request, in: project, in: work)
                }
            if let names = change.roles {
                user = try await roles.replace(rolesOf: user, with: names, in: project, in: work)
            }
            if let disabled = change.disabled, disabled != user.disabled {
                user = try await setDisabled(disabled, id: user.id, reason: Self.disabledReason, in: project, in: work)
            }
            if change.endSessions {
                try await endSessions(userId: user.id, reason: "logout_all", projectId: project.id, in: work)
            }
            return user
        }
    }

    /// Disables (or enables again) a user; a disabled user cannot sign in, and disabling ends its sessions.
    public func setDisabled(_ disabled: Bool, id: String, in project: Project) async throws -> User {
        let user = try await users.unitOfWork { work in
            try await setDisabled(disabled, id: id, reason: Self.disabledReason, in: project, in: work)
        }
        logger.info(
            disabled ? "User disabled" : "User enabled", metadata: ["user": "\(id)", "project": "\(project.id)"])
        return user
    }

    /// Disables (or enables) a user as part of `work`; throws `user_not_found` when the project has no user `id`.
    func setDisabled(_ disabled: Bool, id: String, reason: String, in project: Project, in work: UnitOfWork)
        async throws -> User
    {
        guard let user = try await flag(disabled, id: id, reason: reason, projectId: project.id, in: work) else {
            throw UserService.notFound(id)
        }
        return user
    }

    /// Disables `userId` of project `projectId` and ends its sessions for `reason`, in `work`. A backend's own user
    /// id (not a Verity user) has no flag and no sessions: nothing changes.
    func disableIfKnown(userId: String, reason: String, projectId: String, in work: UnitOfWork) async throws {
        _ = try await flag(true, id: userId, reason: reason, projectId: projectId, in: work)
    }

    /// Ends every session of `userId` for `reason`, in `work`.
    func endSessions(userId: String, reason: String, projectId: String, in work: UnitOfWork) async throws {
        try await sessions.revokeAll(userId: userId, reason: reason, projectId: projectId, in: work)
    }

    /// The one place a user's disabled flag changes: disabling also revokes every session of the user, for
    /// `reason`, in the same unit of work. Nil when there is no such user.
    private func flag(_ disabled: Bool, id: String, reason: String, projectId: String, in work: UnitOfWork)
        async throws -> User?
    {
        let user = try await users.setDisabledFlag(disabled, id: id, projectId: projectId, in: work)
        if disabled { try await endSessions(userId: id, reason: reason, projectId: projectId, in: work) }
        return user
    }

    /// Why sessions end when an administrator disables their user.
    static let disabledReason = "user_disabled"
}
