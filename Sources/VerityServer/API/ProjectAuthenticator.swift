import Hummingbird
import VerityCore

/// Puts the project a request names in the context, or refuses the request: `Authorization: Bearer vk_…` on the
/// backend's routes (``apiKey(_:)``), `X-Verity-Project` on the app-facing ones (``projectHeader(_:)``).
struct ProjectAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    /// The request's project; throws the refusal when it names none.
    let project: @Sendable (Request) async throws -> Project

    /// The project of a secret API key.
    static func apiKey(_ admin: AdminService) -> Self {
        Self { request in
            guard let secret = request.bearerToken else {
                throw VerityError(.unauthorized, "Send a secret API key as `Authorization: Bearer vk_…`.")
            }
            guard let project = try await admin.project(forAPIKey: secret) else {
                throw VerityError(.unauthorized, "The API key is unknown or revoked; send it as `Bearer vk_…`.")
            }
            return project
        }
    }

    /// The project named by `X-Verity-Project` (its public id).
    static func projectHeader(_ admin: AdminService) -> Self {
        let headerName = AuthHeaders.project.lowercased()
        return Self { request in
            let header = request.headers.first { $0.name.canonicalName == headerName }
            guard let id = header?.value, AdminService.isProjectId(id) else {
                throw VerityError(.unauthorized, "Name the project with `\(AuthHeaders.project): prj_…`.")
            }
            guard let project = try await admin.findProject(id: id) else {
                throw VerityError(.projectNotFound, "No project \(id).")
            }
            return project
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        context.project = try await project(request)
        return try await next(request, context)
    }
}
