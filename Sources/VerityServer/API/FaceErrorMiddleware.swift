import Hummingbird
import Logging

/// How a face words its errors: problem+json for the native API, Twilio's `{code, message, more_info, status}`,
/// Google's `{"error": {…}}` for the Firebase face.
protocol FaceErrorWording: Sendable {
    /// The face's answer for an error it knows (a Domain refusal, a Hummingbird HTTP error, its own error type), or
    /// nil for an unexpected one.
    func response(for error: any Error, to request: Request) -> Response?
    /// The face's 500, which says nothing about internals.
    func internalError(to request: Request) -> Response
}

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
