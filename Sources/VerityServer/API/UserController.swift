import Hummingbird
import VerityCore

extension User: ResponseEncodable {}

/// The backend's admin API for a project's users (API key).
struct UserController {
    let users: UserService
    /// Disabling and enabling, which end a user's sessions with it.
    let accounts: UserAccounts

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        // `:userId`, as in `users/:userId/factors`, so the two share one path segment in the router.
        group.post("users", use: create)
        group.get("users", use: list)
        group.get("users/:userId", use: get)
        group.patch("users/:userId", use: update)
        group.delete("users/:userId", use: delete)
        group.post("users/:userId/disable", use: disable)
        group.post("users/:userId/enable", use: enable)
    }

    @Sendable func create(_ request: Request, context: VerityRequestContext) async throws -> EditedResponse<User> {
        try await request.created(CreateUserRequest.self, context: context) { try await users.create($0, in: $1) }
    }

    @Sendable func list(_ request: Request, context: VerityRequestContext) async throws -> Page<User> {
        let query = request.uri.queryParameters
        let limit = try request.queryInteger("limit")
        return try await users.list(
            loginId: query["loginId"].map(String.init), limit: limit, cursor: request.cursor,
            in: try context.requireProject())
    }

    @Sendable func get(_ request: Request, context: VerityRequestContext) async throws -> User {
        try await users.user(id: try context.pathParameter("userId"), in: try context.requireProject())
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> User {
        let body = try await request.decodeJSON(UpdateUserRequest.self, context: context)
        return try await users.update(id: try context.pathParameter("userId"), body, in: try context.requireProject())
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await users.delete(id: try context.pathParameter("userId"), in: try context.requireProject())
        return Response(status: .noContent)
    }

    @Sendable func disable(_ request: Request, context: VerityRequestContext) async throws -> User {
        try await accounts.setDisabled(true, id: try context.pathParameter("userId"), in: try context.requireProject())
    }

    @Sendable func enable(_ request: Request, context: VerityRequestContext) async throws -> User {
        try await accounts.setDisabled(false, id: try context.pathParameter("userId"), in: try context.requireProject())
    }
}
