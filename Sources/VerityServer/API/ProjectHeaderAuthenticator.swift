import Hummingbird
import VerityCore

/// Puts the project named by `X-Verity-Project` (its public id) in the context, for the app-facing routes.
struct ProjectHeaderAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let admin: AdminService

    private static let headerName = AuthHeaders.project.lowercased()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let header = request.headers.first { $0.name.canonicalName == Self.headerName }
        guard let id = header?.value, id.hasPrefix("prj_"), id.count <= 64
        else {
            throw VerityError(.unauthorized, "Name the project with `\(AuthHeaders.project): prj_…`.")
        }
        guard let project = try await admin.findProject(id: id) else {
            throw VerityError(.projectNotFound, "No project \(id).")
        }
        var context = context
        context.project = project
        return try await next(request, context)
    }
}
