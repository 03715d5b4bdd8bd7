import Hummingbird

/// Authenticates `Authorization: Bearer vk_…` and puts the key's project in the context.
struct APIKeyAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let admin: AdminService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let secret = request.bearerToken else {
            throw VerityError(.unauthorized, "Send a secret API key as `Authorization: Bearer vk_…`.")
        }
        guard let project = try await admin.project(forAPIKey: secret) else {
            throw VerityError(.unauthorized, "The API key is unknown or revoked; send it as `Bearer vk_…`.")
        }
        var context = context
        context.project = project
        return try await next(request, context)
    }
}
