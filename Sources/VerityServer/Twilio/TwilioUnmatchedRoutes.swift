import Hummingbird

/// Answers requests under the face's prefix that no route takes as Twilio does: `404` / `20404` for a path that is
/// not a resource, `405` / `20004` for a resource asked with a method it does not have. Without it they would get the
/// native API's problem+json, which twilio-python reads as another exception class.
///
/// Added to the router after the face's routes, so it wraps only the router's not-found responder (and routes added
/// later, which it passes through): an error that reaches it from a path under the prefix is the router's "no route".
struct TwilioUnmatchedRoutes: RouterMiddleware {
    typealias Context = VerityRequestContext
    /// The face's path prefix and version (`/twilio/v2`).
    let versionPath: String
    /// The methods of each of the face's routes, by path pattern (`/twilio/v2/Services/{serviceSid}`).
    let routes: [(pattern: [Substring], methods: Set<HTTPRequest.Method>)]
    let clock: any TimeSource

    /// - Parameter routes: The router's routes; those under `versionPath` are the face's.
    init(versionPath: String, routes: [Router<Context>.RouteDescription], clock: any TimeSource) {
        self.versionPath = versionPath
        self.clock = clock
        let faces = routes.filter { $0.path.description.hasPrefix(versionPath + "/") }
        self.routes = Dictionary(grouping: faces, by: { $0.path.description }).map { path, routes in
            (path.split(separator: "/"), Set(routes.map(\.method)))
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        guard path == versionPath || path.hasPrefix(versionPath + "/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let components = path.split(separator: "/")
            let error =
                if routes.contains(where: { Self.matches(components, $0.pattern) }) {
                    TwilioError(code: 20004, message: "Method not allowed", status: 405)
                } else {
                    TwilioError.notFound(String(path.dropFirst(versionPath.count)))
                }
            return error.response(now: clock.now())
        }
    }

    /// Whether a request path's components fill a route pattern (a capture, `{name}`, takes any one component).
    private static func matches(_ components: [Substring], _ pattern: [Substring]) -> Bool {
        components.count == pattern.count
            && zip(components, pattern).allSatisfy { component, part in part.hasPrefix("{") || component == part }
    }
}
