import HTTPTypes
import Hummingbird

/// Answers every request with `X-Request-Id`: the id Hummingbird gave the request and writes in its log lines
/// (unique within the process; hexadecimal digits, 32 or a few fewer, because Hummingbird writes its random first
/// half without leading zeros). A 500 is logged with the same id (``FaceErrorMiddleware``), so a client that reports
/// it lets the operator find the log line.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response = try await next(request, context)
        if let name = requestIDHeader { response.headers[name] = context.id }
        return response
    }
}

private let requestIDHeader = HTTPField.Name("X-Request-Id")
