import Hummingbird
import VerityCore

extension Role: ResponseEncodable {}
extension TestPhoneNumber: ResponseEncodable {}

/// The backend's admin API for roles, role assignments, test numbers and security events (API key).
struct RoleController {
    let roles: RoleService
    let testNumbers: TestNumberService
    let sessions: SessionService

    func addRoutes(to group: RouterGroup<VerityRequestContext>) {
        group.post("roles", use: create)
        group.get("roles", use: list)
        group.patch("roles/:name", use: update)
        group.delete("roles/:name", use: delete)
        group.post("users/:userId/roles", use: assign)
        group.delete("users/:userId/roles/:name", use: remove)
        group.post("test-numbers", use: addTestNumber)
        group.get("test-numbers", use: testNumbers)
        group.delete("test-numbers/:phoneNumber", use: removeTestNumber)
        group.get("security-events", use: securityEvents)
    }

    @Sendable func create(_ request: Request, context: VerityRequestContext) async throws -> EditedResponse<Role> {
        try await request.created(CreateRoleRequest.self, context: context) { try await roles.create($0, in: $1) }
    }

    @Sendable func list(_ request: Request, context: VerityRequestContext) async throws -> Page<Role> {
        Page(items: try await roles.list(in: try context.requireProject()))
    }

    @Sendable func update(_ request: Request, context: VerityRequestContext) async throws -> Role {
        let body = try await request.decodeJSON(UpdateRoleRequest.self, context: context)
        return try await roles.update(name: try context.pathParameter("name"), body, in: try context.requireProject())
    }

    @Sendable func delete(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await roles.delete(name: try context.pathParameter("name"), in: try context.requireProject())
        return Response(status: .noContent)
    }

    @Sendable func assign(_ request: Request, context: VerityRequestContext) async throws -> User {
        let body = try await request.decodeJSON(AssignRolesRequest.self, context: context)
        return try await roles.assign(
            body.roles, toUser: try context.pathParameter("userId"), in: try context.requireProject())
    }

    @Sendable func remove(_ request: Request, context: VerityRequestContext) async throws -> User {
        try await roles.remove(
            try context.pathParameter("name"), fromUser: try context.pathParameter("userId"),
            in: try context.requireProject())
    }

    @Sendable func addTestNumber(_ request: Request, context: VerityRequestContext) async throws
        -> EditedResponse<TestPhoneNumber>
    {
        try await request.created(CreateTestPhoneNumberRequest.self, context: context) {
            try await testNumbers.add($0, in: $1)
        }
    }

    @Sendable func testNumbers(_ request: Request, context: VerityRequestContext) async throws
        -> Page<TestPhoneNumber>
    {
        Page(items: try await testNumbers.list(in: try context.requireProject()))
    }

    @Sendable func removeTestNumber(_ request: Request, context: VerityRequestContext) async throws -> Response {
        try await testNumbers.remove(try context.pathParameter("phoneNumber"), in: try context.requireProject())
        return Response(status: .noContent)
    }

    @Sendable func securityEvents(_ request: Request, context: VerityRequestContext) async throws
        -> Page<SecurityEvent>
    {
        let query = request.uri.queryParameters
        let limit = try request.queryInteger("limit")
        return try await sessions.securityEvents(
            userId: query["userId"].map(String.init), limit: limit, in: try context.requireProject())
    }
}
