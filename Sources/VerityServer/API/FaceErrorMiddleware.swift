import Hummingbird
import Logging

/// Every face's error middleware: the face's wording for what it knows, and for anything else a 500 that is logged
/// here (with the route, never a link's secret, and the request's `X-Request-Id`) and says nothing to the client.
struct FaceErrorMiddleware<Context: RequestContext, Wording: FaceErrorWording>: RouterMiddleware {
    let wording: Wording
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            if let response = wording.response(for: error, to: request) { return response }
            logger.error(
                "Unhandled error",
                metadata: [
                    "error": "\(String(reflecting: error))", "path": "\(request.loggablePath)",
                    "request_id": "\(context.id)",
                ])
            return wording.internalError(to: request)
        }
    }
}
