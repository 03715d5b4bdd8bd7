import Hummingbird

/// Turns the router's 404 for a path it has under other methods only into `HTTPError(.methodNotAllowed)` with the
/// `Allow` header RFC 9110 asks for; each face words it in its shape (problem+json `method_not_allowed`, Twilio's
/// 20004, Descope's E011003). Hummingbird's router answers 404 to it, as to a path it does not have.
///
/// Added to the router after every route, it wraps only the router's not-found responder. Which methods a path has is
/// asked of a second router with the same paths, so a path matches here exactly as it matches there.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    private let methods: RouterResponder<Context>

    /// The method under which the second router answers with a path's `Allow` value (any would do: that router has
    /// no other).
    private static var probe: HTTPRequest.Method { .connect }

    /// - Parameter routes: Every route of the router; a path with `GET` also allows `HEAD`
    ///   (``RouterOptions/autoGenerateHeadEndpoints``).
    init(routes: [Router<Context>.RouteDescription]) {
        let router = Router(context: Context.self)
        for (path, routes) in Dictionary(grouping: routes, by: { $0.path.description }) {
            var allowed = Set(routes.map(\.method.rawValue))
            if allowed.contains("GET") { allowed.insert("HEAD") }
            let allow = allowed.sorted().joined(separator: ", ")
            router.on(RouterPath(path), method: Self.probe) { _, _ in Response(status: .ok, headers: [.allow: allow]) }
        }
        methods = router.buildResponder()
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var head = request.head
        head.method = Self.probe
        let asking = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        guard let allow = try? await methods.respond(to: asking, context: context).headers[.allow] else {
            return try await next(request, context)
        }
        throw HTTPError(.methodNotAllowed, headers: [.allow: allow], message: "This path allows \(allow).")
    }
}
