import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import VerityCore

/// Authenticates a possession flow's auth token for the flow in the path, and puts the flow and its project in the
/// context.
struct PossessionTokenAuthenticator: RouterMiddleware {
    typealias Context = VerityRequestContext
    let possession: PossessionService
    let admin: AdminService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let token = request.bearerToken else {
            throw VerityError(.unauthorized, "Send the flow's auth token as `Authorization: Bearer vpt_…`.")
        }
        let flow = try await possession.authenticate(
            token: token, correlationId: try context.pathParameter("correlationId"))
        guard let project = try await admin.findProject(id: flow.projectId) else {
            throw VerityError(.possessionNotFound)
        }
        var context = context
        context.project = project
        context.possession = flow
        return try await next(request, context)
    }
}
