import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import VerityCore

/// Answers requests under the face's prefix that no route takes in Descope's shape, instead of the native API's
/// problem+json. Added to the router after the face's routes, so an error that reaches it from a path under the
/// prefix is the router's "no route".
struct DescopeUnmatchedRoutes: RouterMiddleware {
    typealias Context = VerityRequestContext
    let prefix: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.uri.path.hasPrefix(prefix + "/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            return DescopeError(
                status: Int(error.status.code), errorCode: "E011003", description: "Not found",
                message: "No such route."
            ).response.adding(error.headers)
        }
    }
}
