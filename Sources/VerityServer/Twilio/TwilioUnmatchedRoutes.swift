import Hummingbird

/// Answers requests under the face's prefix that no route takes as Twilio does: `404` / `20404` for a path that is
/// not a resource, `405` / `20004` for a resource asked with a method it does not have (``MethodNotAllowedMiddleware``
/// tells the two apart). Without it they would get the native API's problem+json, which twilio-python reads as another
/// exception class.
///
/// Added to the router after the face's routes, so it wraps only the router's not-found responder (and routes added
/// later, which it passes through): an error that reaches it from a path under the prefix is the router's "no route".
struct TwilioUnmatchedRoutes: RouterMiddleware {
    typealias Context = VerityRequestContext
    /// The face's path prefix and version (`/twilio/v2`).
    let versionPath: String
    let clock: any TimeSource

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        guard path == versionPath || path.hasPrefix(versionPath + "/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .methodNotAllowed {
            return TwilioError(code: 20004, message: "Method not allowed", status: 405).response(now: clock.now())
                .adding(error.headers)
        } catch let error as HTTPError where error.status == .notFound {
            return TwilioError.notFound(String(path.dropFirst(versionPath.count))).response(now: clock.now())
        }
    }
}
