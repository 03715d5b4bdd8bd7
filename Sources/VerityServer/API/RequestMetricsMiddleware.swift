import Hummingbird

/// Counts requests and their latency per route template (never per raw path, which would let clients
/// create unbounded label values).
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: VerityMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.request(
            method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: response.status.code,
            duration: ContinuousClock.now - start)
        return response
    }
}
