import Hummingbird
import Logging

/// Renders every error under the Twilio face as Twilio does (`{code, message, more_info, status}`); unexpected
/// errors become a logged 500 that says nothing about internals.
struct TwilioErrorMiddleware: RouterMiddleware {
    typealias Context = VerityRequestContext
    let logger: Logger
    let clock: any TimeSource
    /// The face's path prefix and version (`/twilio/v2`), cut from paths in 404 messages.
    let pathPrefix: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as TwilioError {
            return error.response(now: clock.now())
        } catch let error as VerityError {
            return TwilioError(error, resource: resource(request)).response(now: clock.now())
        } catch let error as HTTPError {
            let status = error.status.code
            let twilioError =
                switch status {
                case 400: TwilioError(code: 60200, message: error.body ?? "Bad Request", status: 400)
                case 401: TwilioError.authenticationFailed
                case 404: TwilioError.notFound(resource(request))
                default:
                    TwilioError(code: 20000 + status, message: error.body ?? error.status.reasonPhrase, status: status)
                }
            return twilioError.response(now: clock.now())
        } catch {
            logger.error(
                "Unhandled error",
                metadata: ["error": "\(String(reflecting: error))", "path": "\(request.loggablePath)"])
            return TwilioError(code: 20500, message: "Internal Server Error", status: 500).response(now: clock.now())
        }
    }

    private func resource(_ request: Request) -> String {
        let path = request.uri.path
        return path.hasPrefix(pathPrefix) ? String(path.dropFirst(pathPrefix.count)) : path
    }
}
